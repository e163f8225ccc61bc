import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.AbstractMongoBackend;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * eggmesh's MongoDB-wire test server: mongo-java-server on 127.0.0.1, reporting wire version 13 so
 * the current `mongodb` driver connects. Run as a single source file:
 *
 *   java -cp '<jar dir>/*' Launcher.java <port> [dataFile]
 *
 * Port 0 picks a free port. Without a data file the data lives in memory; with one it lives in an
 * H2 MVStore file and every acknowledged write command is committed to the file before the reply,
 * so a killed server loses nothing it acknowledged. `-Deggmesh.oplog=true` enables the oplog
 * (change streams); `-Deggmesh.exitWithParent=true` stops the server when its stdin closes (the
 * parent process died). Prints one line "eggmesh-mongodb ready port=<port> ..." when it accepts
 * connections; SIGTERM stops it (the file is closed cleanly).
 */
public class Launcher {
  /** MongoDB 5.0 speaks wire version 13; the driver refuses servers below 9 (the library default is 8). */
  static final class Wire13 implements MongoVersion {
    @Override
    public List<Integer> getVersionArray() {
      return List.of(5, 0, 0);
    }

    @Override
    public int getWireVersion() {
      return 13;
    }
  }

  /** Commands after which the file backend commits, so an acknowledged write is on disk. */
  static final Set<String> WRITES =
      Set.of("insert", "update", "delete", "findandmodify", "createindexes", "drop", "dropdatabase", "create");

  /** The H2 backend, committing the MVStore after every write command before replying. */
  static final class DurableH2Backend extends H2Backend {
    DurableH2Backend(String file) {
      super(file);
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
      Document reply = super.handleCommand(channel, database, command, query);
      if (WRITES.contains(command.toLowerCase())) {
        synchronized (this) {
          commit();
        }
      }
      return reply;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: java -cp '<jar dir>/*' Launcher.java <port> [dataFile]");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    String dataFile = args.length > 1 ? args[1] : null;
    AbstractMongoBackend backend = dataFile == null ? new MemoryBackend() : new DurableH2Backend(dataFile);
    MongoBackend versioned = backend.version(new Wire13());
    MongoServer server = new MongoServer(versioned);
    if (Boolean.getBoolean("eggmesh.oplog")) server.enableOplog();
    server.bind("127.0.0.1", port);
    InetSocketAddress address = server.getLocalAddress();

    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.shutdownNow();
                  stopped.countDown();
                }));
    if (Boolean.getBoolean("eggmesh.exitWithParent")) {
      // The parent holds our stdin open; end of input means it died without stopping us.
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
    System.out.println(
        "eggmesh-mongodb ready port="
            + address.getPort()
            + " wire=13 backend="
            + (dataFile == null ? "memory" : "h2:" + dataFile));
    System.out.flush();
    stopped.await();
  }
}
