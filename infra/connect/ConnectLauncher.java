/**
 * Runs eggmesh's Kafka Connect worker in distributed mode (its configs, offsets and statuses live in
 * Kafka topics, so a restarted or replaced worker resumes where the last one committed).
 *
 * <p>Usage: {@code java -cp '<jars>/*' ConnectLauncher.java <worker.properties>}. SIGTERM stops the
 * worker cleanly. {@code -Deggmesh.exitWithParent=true} also stops it when its stdin closes (the parent
 * process died without stopping it), so a killed test run leaves no worker behind.
 */
public class ConnectLauncher {
  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: ConnectLauncher <worker.properties>");
      System.exit(2);
    }
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
                // The worker's shutdown hook leaves its group through the broker; with the broker gone
                // too it would wait for it forever, so the exit is forced after a grace period.
                Thread halt =
                    new Thread(
                        () -> {
                          try {
                            Thread.sleep(15_000);
                          } catch (InterruptedException e) {
                            // halting now
                          }
                          Runtime.getRuntime().halt(1);
                        },
                        "parent-watchdog-halt");
                halt.setDaemon(true);
                halt.start();
                System.exit(0);
              },
              "parent-watchdog");
      watchdog.setDaemon(true);
      watchdog.start();
    }
    org.apache.kafka.connect.cli.ConnectDistributed.main(args);
  }
}
