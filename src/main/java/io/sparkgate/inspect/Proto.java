package io.sparkgate.inspect;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.MapEntry;
import com.google.protobuf.Message;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Field access by name, so detectors read the same way across messages that share field names. */
final class Proto {
  private Proto() {}

  static FieldDescriptor field(Message m, String name) {
    return m.getDescriptorForType().findFieldByName(name);
  }

  static boolean has(Message m, String name) {
    FieldDescriptor fd = field(m, name);
    if (fd == null) return false;
    return fd.isRepeated() ? m.getRepeatedFieldCount(fd) > 0 : m.hasField(fd);
  }

  /** A string or scalar field as text, or null when absent or unset. */
  static String str(Message m, String name) {
    FieldDescriptor fd = field(m, name);
    if (fd == null || fd.isRepeated() || fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE)
      return null;
    if (fd.hasPresence() && !m.hasField(fd)) return null;
    Object v = m.getField(fd);
    if (v instanceof com.google.protobuf.ByteString) return null;
    String s = String.valueOf(v);
    return fd.getJavaType() == FieldDescriptor.JavaType.STRING && s.isEmpty() && !fd.hasPresence()
        ? null
        : s;
  }

  static List<String> strings(Message m, String name) {
    FieldDescriptor fd = field(m, name);
    List<String> out = new ArrayList<>();
    if (fd == null || !fd.isRepeated() || fd.getJavaType() != FieldDescriptor.JavaType.STRING)
      return out;
    for (int i = 0; i < m.getRepeatedFieldCount(fd); i++)
      out.add((String) m.getRepeatedField(fd, i));
    return out;
  }

  static Map<String, String> stringMap(Message m, String name) {
    FieldDescriptor fd = field(m, name);
    Map<String, String> out = new LinkedHashMap<>();
    if (fd == null || !fd.isMapField()) return out;
    for (int i = 0; i < m.getRepeatedFieldCount(fd); i++) {
      Object e = m.getRepeatedField(fd, i);
      if (e instanceof MapEntry<?, ?> entry)
        out.put(String.valueOf(entry.getKey()), String.valueOf(entry.getValue()));
      else if (e instanceof Message em) {
        out.put(
            String.valueOf(em.getField(em.getDescriptorForType().findFieldByName("key"))),
            String.valueOf(em.getField(em.getDescriptorForType().findFieldByName("value"))));
      }
    }
    return out;
  }

  static int bytesSize(Message m, String name) {
    FieldDescriptor fd = field(m, name);
    return fd == null ? 0 : ((com.google.protobuf.ByteString) m.getField(fd)).size();
  }

  /** The name of the set case of a oneof, or null. */
  static String oneofCase(Message m, String oneof) {
    for (var o : m.getDescriptorForType().getRealOneofs()) {
      if (o.getName().equals(oneof)) {
        FieldDescriptor set = m.getOneofFieldDescriptor(o);
        return set == null ? null : set.getName();
      }
    }
    return null;
  }
}
