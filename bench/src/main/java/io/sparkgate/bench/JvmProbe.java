package io.sparkgate.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Reads a proxy JVM's memory from outside: heap used (JMX), NIO direct buffers (JMX), native memory that
 * NMT files under "Other" (where Netty's direct buffers land, cleaner or not), and the process's RSS.
 */
final class JvmProbe implements AutoCloseable {
  private static final Pattern NMT_OTHER = Pattern.compile("Other \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private final JMXConnector connector;
  private final MBeanServerConnection mbeans;
  private final MemoryMXBean memory;
  private final CompilationMXBean jit;
  private final long pid;

  /** Memory at one moment, in bytes. */
  record Sample(long heapUsed, long directBuffers, long nmtOther, long rss) {}

  private JvmProbe(JMXConnector connector, long pid) throws IOException {
    this.connector = connector;
    this.mbeans = connector.getMBeanServerConnection();
    this.memory = ManagementFactory.newPlatformMXBeanProxy(mbeans, ManagementFactory.MEMORY_MXBEAN_NAME,
        MemoryMXBean.class);
    this.jit = ManagementFactory.newPlatformMXBeanProxy(mbeans, ManagementFactory.COMPILATION_MXBEAN_NAME,
        CompilationMXBean.class);
    this.pid = pid;
  }

  static JvmProbe connect(int jmxPort, long pid) throws IOException, InterruptedException {
    JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPort + "/jmxrmi");
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

  Sample sample(boolean withNmt) throws IOException {
    long heap = memory.getHeapMemoryUsage().getUsed();
    long direct;
    try {
      direct = (Long) mbeans.getAttribute(new ObjectName("java.nio:type=BufferPool,name=direct"), "MemoryUsed");
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
      Object out = mbeans.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
          new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
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
