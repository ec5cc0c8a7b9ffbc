package io.sparkgate.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Reads a proxy JVM's memory from outside: heap used (JMX), NIO direct buffers (JMX), native memory that
 * NMT files under "Other" (where Netty's direct buffers land, cleaner or not), the process's RSS, and how
 * much its heap allocates and collects.
 */
final class JvmProbe implements AutoCloseable {
  private static final Pattern NMT_OTHER =
      Pattern.compile("Other \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private final JMXConnector connector;
  private final MBeanServerConnection mbeans;
  private final MemoryMXBean memory;
  private final CompilationMXBean jit;
  private final long pid;
  private final List<GarbageCollectorMXBean> collectors;

  /** Memory at one moment, in bytes. */
  record Sample(long heapUsed, long directBuffers, long nmtOther, long rss) {}

  /**
   * The heap's activity since the JVM started: bytes allocated by all its threads, and the collections (all
   * collectors) with their total pause. Two of these bracket a scenario.
   */
  record HeapActivity(long allocatedBytes, long collections, long collectionMillis) {
    HeapActivity since(HeapActivity earlier) {
      return new HeapActivity(
          allocatedBytes - earlier.allocatedBytes,
          collections - earlier.collections,
          collectionMillis - earlier.collectionMillis);
    }
  }

  private JvmProbe(JMXConnector connector, long pid) throws IOException {
    this.connector = connector;
    this.mbeans = connector.getMBeanServerConnection();
    this.memory =
        ManagementFactory.newPlatformMXBeanProxy(
            mbeans, ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
    this.jit =
        ManagementFactory.newPlatformMXBeanProxy(
            mbeans, ManagementFactory.COMPILATION_MXBEAN_NAME, CompilationMXBean.class);
    this.pid = pid;
    this.collectors = ManagementFactory.getPlatformMXBeans(mbeans, GarbageCollectorMXBean.class);
  }

  static JvmProbe connect(int jmxPort, long pid) throws IOException, InterruptedException {
    JMXServiceURL url =
        new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPort + "/jmxrmi");
    IOException last = null;
    for (int i = 0; i < 50; i++) {
      try {
        return new JvmProbe(JMXConnectorFactory.connect(url), pid);
      } catch (IOException e) {
        last = e;
        Thread.sleep(200);
      }
    }
    throw last;
  }

  /** Milliseconds the JVM's JIT compilers have spent since it started. */
  long jitMillis() throws IOException {
    return jit.getTotalCompilationTime();
  }

  /** Read as an attribute: HotSpot's thread bean has it since JDK 14, but the interface gives it a default. */
  HeapActivity heapActivity() throws IOException {
    long allocated;
    try {
      allocated =
          (Long)
              mbeans.getAttribute(
                  new ObjectName(ManagementFactory.THREAD_MXBEAN_NAME),
                  "TotalThreadAllocatedBytes");
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      allocated = -1;
    }
    long collections = 0;
    long millis = 0;
    for (GarbageCollectorMXBean gc : collectors) {
      collections += gc.getCollectionCount();
      millis += gc.getCollectionTime();
    }
    return new HeapActivity(allocated, collections, millis);
  }

  Sample sample(boolean withNmt) throws IOException {
    long heap = memory.getHeapMemoryUsage().getUsed();
    long direct;
    try {
      direct =
          (Long)
              mbeans.getAttribute(
                  new ObjectName("java.nio:type=BufferPool,name=direct"), "MemoryUsed");
    } catch (Exception e) {
      direct = -1;
    }
    return new Sample(heap, direct, withNmt ? nmtOther() : -1, rss());
  }

  /** Collects garbage twice (so that what is left is what is held) and samples. */
  Sample afterGc() throws IOException, InterruptedException {
    memory.gc();
    Thread.sleep(300);
    memory.gc();
    Thread.sleep(300);
    return sample(true);
  }

  private long nmtOther() {
    try {
      Object out =
          mbeans.invoke(
              new ObjectName("com.sun.management:type=DiagnosticCommand"),
              "vmNativeMemory",
              new Object[] {new String[] {"summary"}},
              new String[] {String[].class.getName()});
      Matcher m = NMT_OTHER.matcher(String.valueOf(out));
      return m.find() ? Long.parseLong(m.group(2)) * 1024 : -1;
    } catch (Exception e) {
      return -1;
    }
  }

  private long rss() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux, or the process is gone
    }
    return -1;
  }

  @Override
  public void close() throws IOException {
    connector.close();
  }
}
