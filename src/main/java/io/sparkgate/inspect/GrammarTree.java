package io.sparkgate.inspect;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;

/**
 * A parse tree in plain Java, detached from the isolated parser that built it ({@link HudiGrammar}). A rule
 * node has its rule's name in {@code rule} and in {@code name} the label of its alternative (the rule's name
 * when it has none); a token node has no rule and its token type's name ({@code STRING}, {@code '('},
 * {@code EOF}). Both know where they are in the original SQL, in UTF-16 offsets.
 */
record GrammarTree(
    String name, String rule, String sql, int start, int end, List<GrammarTree> children) {

  /** True if this is a rule or alternative, or a token type, of that name. */
  boolean is(String n) {
    return n.equals(name) || n.equals(rule);
  }

  /** The original text, comments and whitespace inside it included. */
  String text() {
    return sql.substring(start, end);
  }

  GrammarTree child(int i) {
    return children.get(i);
  }

  /** The first child of that name, or null. */
  GrammarTree child(String n) {
    for (GrammarTree c : children) if (c.is(n)) return c;
    return null;
  }

  List<GrammarTree> children(String n) {
    return children.stream().filter(c -> c.is(n)).toList();
  }

  /** Every node of that name at or below this one, in the order of the text. */
  List<GrammarTree> all(String n) {
    List<GrammarTree> out = new ArrayList<>();
    Deque<GrammarTree> todo = new ArrayDeque<>();
    todo.push(this);
    while (!todo.isEmpty()) {
      GrammarTree t = todo.pop();
      if (t.is(n)) out.add(t);
      for (int i = t.children.size() - 1; i >= 0; i--) todo.push(t.children.get(i));
    }
    return out;
  }

  /**
   * Converts an isolated parser's tree without recursion (its depth is the text's nesting). {@code ruleNames}
   * and {@code tokenNames} are the grammar's, indexed by rule index and token type. Nodes whose alternative is
   * in {@code opaque} are kept without their children: a reader that only needs to know a statement is not
   * one it reads should not pay for a tree of every token of a megabyte of text.
   */
  static GrammarTree of(
      Antlr49 antlr,
      Object root,
      String sql,
      String[] ruleNames,
      String[] tokenNames,
      Set<String> opaque) {
    SqlText text = new SqlText(sql);
    Deque<Pending> stack = new ArrayDeque<>();
    stack.push(new Pending(root, (Integer) Antlr49.call(antlr.childCount, root)));
    GrammarTree done = null;
    while (!stack.isEmpty()) {
      Pending p = stack.peek();
      if (p.next < p.count) {
        Object c = Antlr49.call(antlr.child, p.node, p.next++);
        if (antlr.terminalNode.isInstance(c)) {
          p.add(token(antlr, Antlr49.call(antlr.symbol, c), sql, text, tokenNames), true);
        } else if (opaque.contains(alternative(c.getClass()))) {
          GrammarTree leaf = spanned(antlr, c, List.of(), sql, text, ruleNames);
          p.add(leaf, leaf.end > leaf.start);
        } else {
          stack.push(new Pending(c, (Integer) Antlr49.call(antlr.childCount, c)));
        }
        continue;
      }
      stack.pop();
      boolean tokens = p.start >= 0;
      done =
          tokens
              ? new GrammarTree(
                  alternative(p.node.getClass()),
                  ruleNames[(Integer) Antlr49.call(antlr.ruleIndex, p.node)],
                  sql,
                  p.start,
                  p.end,
                  List.copyOf(p.children))
              : spanned(antlr, p.node, p.children, sql, text, ruleNames);
      if (!stack.isEmpty()) stack.peek().add(done, tokens);
    }
    return done;
  }

  /**
   * A rule node whose span comes from its start and stop tokens; a rule that matched no tokens has an empty
   * span where the next token starts (its stop token is the one before it).
   */
  private static GrammarTree spanned(
      Antlr49 antlr,
      Object node,
      List<GrammarTree> children,
      String sql,
      SqlText text,
      String[] ruleNames) {
    int start =
        Math.min(
            text.utf16((Integer) Antlr49.call(antlr.startIndex, Antlr49.call(antlr.start, node))),
            sql.length());
    Object stop = Antlr49.call(antlr.stop, node);
    int end =
        stop == null
            ? start
            : Math.min(
                text.utf16(Math.max(0, (Integer) Antlr49.call(antlr.stopIndex, stop) + 1)),
                sql.length());
    String rule = ruleNames[(Integer) Antlr49.call(antlr.ruleIndex, node)];
    return new GrammarTree(
        alternative(node.getClass()),
        rule,
        sql,
        start,
        Math.max(start, end),
        List.copyOf(children));
  }

  private static GrammarTree token(
      Antlr49 antlr, Object token, String sql, SqlText text, String[] tokenNames) {
    int type = (Integer) Antlr49.call(antlr.tokenType, token);
    String name = type < 0 ? "EOF" : type < tokenNames.length ? tokenNames[type] : "<" + type + ">";
    int start = Math.min(text.utf16((Integer) Antlr49.call(antlr.startIndex, token)), sql.length());
    int end =
        Math.min(text.utf16((Integer) Antlr49.call(antlr.stopIndex, token) + 1), sql.length());
    return new GrammarTree(name, null, sql, start, Math.max(start, end), List.of());
  }

  /** The label of a context class (HoodieSqlCommonParser$CompactionOnTableContext: compactionOnTable). */
  static String alternative(Class<?> context) {
    String n = context.getName();
    n = n.substring(n.lastIndexOf('$') + 1);
    if (n.endsWith("Context")) n = n.substring(0, n.length() - "Context".length());
    return n.isEmpty() ? n : Character.toLowerCase(n.charAt(0)) + n.substring(1);
  }

  /** A rule node being converted: its children so far and the span of their tokens (-1 before the first). */
  private static final class Pending {
    final Object node;
    final int count;
    final List<GrammarTree> children = new ArrayList<>();
    int next;
    int start = -1;
    int end = -1;

    Pending(Object node, int count) {
      this.node = node;
      this.count = count;
    }

    /** A child; only one with tokens widens the span (an empty rule's position is where the next token is). */
    void add(GrammarTree child, boolean tokens) {
      children.add(child);
      if (!tokens) return;
      if (start < 0) start = child.start;
      end = child.end;
    }
  }
}
