import java.io.PrintStream;

/**
 * Runs eggmesh's single-node Kafka test broker (KRaft: broker and controller in one JVM).
 *
 * <p>Usage: {@code java -cp '<jars>/*' KafkaLauncher.java <server.properties> <cluster-id>}. Formats
 * the log directory named in the properties when it is not formatted yet (an existing one is kept),
 * then runs {@code kafka.Kafka}, which logs "Kafka Server started" when it accepts clients. One JVM
 * for both steps: the format costs no second JVM start. SIGTERM stops the broker cleanly.
 * {@code -Deggmesh.exitWithParent=true} also stops it when its stdin closes (the parent process died
 * without stopping it), so a killed test run leaves no broker behind.
 */
public class KafkaLauncher {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: KafkaLauncher <server.properties> <cluster-id>");
      System.exit(2);
    }
    String properties = args[0];
    String clusterId = args[1];
    if (Boolean.getBoolean("eggmesh.exitWithParent")) {
      Thread watchdog =
          new Thread(
              () -> {
                try {
                  while (System.in.read() != -1) {
                    // ignore input
                  }
                } catch (java.io.IOException e) {
                  // treated as end of input
                }
                System.exit(0);
              },
              "parent-watchdog");
      watchdog.setDaemon(true);
      watchdog.start();
    }
    PrintStream out = System.out;
    int formatted =
        kafka.tools.StorageTool.execute(
            new String[] {"format", "-t", clusterId, "-c", properties, "--ignore-formatted"}, out);
    if (formatted != 0) {
      System.err.println("eggmesh-kafka: formatting the log directory failed (" + formatted + ")");
      System.exit(1);
    }
    kafka.Kafka.main(new String[] {properties});
  }
}
