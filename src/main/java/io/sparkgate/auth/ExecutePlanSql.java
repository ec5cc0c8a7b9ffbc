package io.sparkgate.auth;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.WireFormat;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.SqlCommand;
import java.io.IOException;

/**
 * The SQL text an ExecutePlanRequest runs, read from its encoding: the plan's {@code root.sql.query}, or its
 * {@code command.sql_command}'s input query or (3.5 clients) {@code sql}. Parsing the request to find it
 * cost a full parse of plans that can be megabytes, on every ExecutePlan.
 *
 * <p>Only the canonical encoding is read here: each field on the path at most once, and no other member of
 * the oneofs it passes through. Anything else (repeated fields that protobuf merges, a later oneof member
 * that overrides an earlier one, malformed bytes) answers {@link NotCanonical}, and the caller parses the
 * request as the server will, so a crafted encoding cannot hide its SQL here.
 */
final class ExecutePlanSql {
  private static final int ANY_OTHER = -2;
  private ExecutePlanSql() {}

  /** The request's SQL (as the parsed request's getters would give it), or null if it runs none. */
  static String of(byte[] request) throws NotCanonical {
    try {
      ByteString plan = only(read(request), ExecutePlanRequest.PLAN_FIELD_NUMBER);
      if (plan == null) {
        return null;
      }
      // Plan is one oneof (root, command, compressed_operation, and whatever a later Spark adds).
      ByteString root = oneofMember(read(plan), Plan.ROOT_FIELD_NUMBER, -1);
      if (root != null) {
        return relationSql(root);
      }
      ByteString command = oneofMember(read(plan), Plan.COMMAND_FIELD_NUMBER, -1);
      if (command == null) {
        return null;
      }
      ByteString sqlCommand = oneofMember(read(command), Command.SQL_COMMAND_FIELD_NUMBER, -1);
      return sqlCommand == null ? null : sqlCommandSql(sqlCommand);
    } catch (IOException e) {
      throw new NotCanonical();
    }
  }

  /** Relation.sql.query, or null when the relation is not a SQL relation. */
  private static String relationSql(ByteString relation) throws IOException, NotCanonical {
    ByteString sql = oneofMember(read(relation), Relation.SQL_FIELD_NUMBER, Relation.COMMON_FIELD_NUMBER);
    return sql == null ? null : string(only(read(sql), SQL.QUERY_FIELD_NUMBER));
  }

  /** As SecretRedaction always read it: the input relation's query if it is SQL, else the sql string. */
  @SuppressWarnings("deprecation") // SqlCommand.sql: what 3.5 clients send
  private static String sqlCommandSql(ByteString command) throws IOException, NotCanonical {
    ByteString input = only(read(command), SqlCommand.INPUT_FIELD_NUMBER);
    if (input != null) {
      String inputSql = relationSql(input);
      if (inputSql != null) {
        return inputSql;
      }
    }
    return string(only(read(command), SqlCommand.SQL_FIELD_NUMBER));
  }

  /**
   * The content of the single length-delimited occurrence of {@code field}, or null if absent; NotCanonical
   * if it occurs twice or with another wire type. Other fields are skipped.
   */
  private static ByteString only(CodedInputStream in, int field) throws IOException, NotCanonical {
    return oneofMember(in, field, ANY_OTHER);
  }

  /**
   * Like {@link #only}, for a member of a message's oneof: any other field but {@code allowed} (a field
   * outside the oneof, -1 for none, {@link #ANY_OTHER} outside oneofs) next to it is a rival member, which
   * would override it or be overridden.
   */
  private static ByteString oneofMember(CodedInputStream in, int member, int allowed)
      throws IOException, NotCanonical {
    ByteString found = null;
    boolean othersSeen = false;
    while (true) {
      int tag = in.readTag();
      if (tag == 0) {
        break;
      }
      int number = WireFormat.getTagFieldNumber(tag);
      if (number == member) {
        if (found != null || WireFormat.getTagWireType(tag) != WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          throw new NotCanonical();
        }
        found = in.readBytes(); // a view of the request's array (aliasing): a plan is never copied
      } else {
        othersSeen |= allowed != ANY_OTHER && number != allowed;
        if (!in.skipField(tag)) {
          throw new NotCanonical();
        }
      }
    }
    if (found != null && othersSeen) {
      throw new NotCanonical();
    }
    return found;
  }

  private static CodedInputStream read(byte[] request) {
    // Wrapped, not copied: a ByteString's input is marked immutable, which aliasing needs.
    return read(UnsafeByteOperations.unsafeWrap(request));
  }

  private static CodedInputStream read(ByteString content) {
    CodedInputStream in = content.newCodedInput();
    in.enableAliasing(true);
    return in;
  }

  /** A string field's value; proto3 requires UTF-8, and a request that breaks that does not parse at all. */
  private static String string(ByteString bytes) throws NotCanonical {
    if (bytes == null) {
      return "";
    }
    if (!bytes.isValidUtf8()) {
      throw new NotCanonical();
    }
    return bytes.toStringUtf8();
  }

  /** The encoding is not the canonical one: parse the request instead. */
  static final class NotCanonical extends Exception {
    NotCanonical() {
      super(null, null, false, false);
    }
  }
}
