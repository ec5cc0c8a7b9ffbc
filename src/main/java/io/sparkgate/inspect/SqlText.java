package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.antlr.v4.runtime.ParserRuleContext;
import org.antlr.v4.runtime.Token;

/**
 * The original SQL string and helpers to cut it by parse-tree position. ANTLR counts code points; Java strings
 * count UTF-16 units, so offsets are converted, or a span after an emoji would slice the wrong text.
 */
final class SqlText {
  final String sql;
  private final int[] utf16OfCodePoint; // null when the text has no surrogate pairs

  SqlText(String sql) {
    this.sql = sql;
    boolean surrogates = false;
    for (int i = 0; i < sql.length() && !surrogates; i++)
      surrogates = Character.isSurrogate(sql.charAt(i));
    if (!surrogates) {
      utf16OfCodePoint = null;
    } else {
      int cps = sql.codePointCount(0, sql.length());
      utf16OfCodePoint = new int[cps + 1];
      int u = 0;
      for (int cp = 0; cp < cps; cp++) {
        utf16OfCodePoint[cp] = u;
        u += Character.charCount(sql.codePointAt(u));
      }
      utf16OfCodePoint[cps] = u;
    }
  }

  int utf16(int codePointIndex) {
    return utf16OfCodePoint == null ? codePointIndex : utf16OfCodePoint[codePointIndex];
  }

  /** UTF-16 start offset of a rule. */
  int start(ParserRuleContext ctx) {
    return utf16(ctx.getStart().getStartIndex());
  }

  /** UTF-16 end offset (exclusive) of a rule. */
  int end(ParserRuleContext ctx) {
    Token stop = ctx.getStop() == null ? ctx.getStart() : ctx.getStop();
    return utf16(stop.getStopIndex() + 1);
  }

  int start(Token t) {
    return utf16(t.getStartIndex());
  }

  int end(Token t) {
    return utf16(t.getStopIndex() + 1);
  }

  /** The original text of a rule, whitespace and comments inside it included. */
  String text(ParserRuleContext ctx) {
    int s = start(ctx);
    int e = end(ctx);
    return e <= s ? "" : sql.substring(s, e);
  }

  /** The original text after a token to the end of the statement, as Spark's {@code remainder()}. */
  String remainder(Token after) {
    return sql.substring(Math.min(end(after), sql.length()));
  }

  /** An identifier's value: backquotes (and double quotes when they quote identifiers) removed. */
  static String unquoteIdentifier(String text) {
    if (text.length() >= 2 && text.startsWith("`") && text.endsWith("`")) {
      return text.substring(1, text.length() - 1).replace("``", "`");
    }
    if (text.length() >= 2 && text.startsWith("\"") && text.endsWith("\"")) {
      return text.substring(1, text.length() - 1).replace("\"\"", "\"");
    }
    return text;
  }

  /**
   * A string literal's value, close to Spark's SparkParserUtils.unescapeSQLString: quotes removed, backslash
   * escapes decoded (with escapedStringLiterals off), R'...' raw strings kept as is. Adjacent literals
   * ('a' 'b') are concatenated by the caller.
   */
  static String unescapeString(String literal) {
    if (literal.length() >= 3 && (literal.charAt(0) == 'r' || literal.charAt(0) == 'R')) {
      return literal.substring(2, literal.length() - 1);
    }
    if (literal.length() < 2) return literal;
    char quote = literal.charAt(0);
    String body = literal.substring(1, literal.length() - 1);
    StringBuilder b = new StringBuilder(body.length());
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (c == quote && i + 1 < body.length() && body.charAt(i + 1) == quote) {
        b.append(quote);
        i++;
      } else if (c == '\\' && i + 1 < body.length()) {
        char n = body.charAt(++i);
        switch (n) {
          case '0' -> b.append('\0');
          case 'b' -> b.append('\b');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'Z' -> b.append('\u001A');
          case '%' -> b.append("\\%");
          case '_' -> b.append("\\_");
          case 'u' -> {
            if (i + 4 < body.length() + 0 && isHex(body, i + 1, 4)) {
              b.append((char) Integer.parseInt(body.substring(i + 1, i + 5), 16));
              i += 4;
            } else {
              b.append('u');
            }
          }
          default -> b.append(n);
        }
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  private static boolean isHex(String s, int from, int n) {
    if (from + n > s.length()) return false;
    for (int i = from; i < from + n; i++) if (Character.digit(s.charAt(i), 16) < 0) return false;
    return true;
  }

  /**
   * Spark's split of an ADD JAR/FILE/ARCHIVE argument (SparkSqlAstBuilder.visitManageResource, 4.0): the
   * text after the resource word, {@code trim}med, then every match of its strLiteralDef pattern, a quoted
   * string (unescaped) or a run of characters other than space, tab, CR, LF and quotes. Taken as is, so that
   * {@code /tmp/"x".jar} is the three paths Spark adds and a leading U+3000 stays part of the path; a
   * trailing semicolon is part of the text Spark reads too.
   */
  static List<String> resourcePaths(String raw) {
    List<String> out = new ArrayList<>();
    Matcher m = RESOURCE_PATH.matcher(raw.trim());
    while (m.find()) {
      String p = m.group(1);
      out.add(p.startsWith("\"") || p.startsWith("'") ? unescapeString(p) : p);
    }
    return out;
  }

  private static final Pattern RESOURCE_PATH =
      Pattern.compile("(\".*?[^\\\\]\"|'.*?[^\\\\]'|[^ \n\r\t\"']+)");
}
