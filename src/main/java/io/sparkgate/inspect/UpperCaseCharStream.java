package io.sparkgate.inspect;

import org.antlr.v4.runtime.CharStream;
import org.antlr.v4.runtime.CodePointCharStream;
import org.antlr.v4.runtime.IntStream;
import org.antlr.v4.runtime.misc.Interval;

/**
 * Shows Spark's lexer upper-cased characters while token text keeps the original case: Spark's grammar only
 * spells keywords in upper case and relies on the same wrapper (parsers.scala, UpperCaseCharStream).
 */
final class UpperCaseCharStream implements CharStream {
  private final CodePointCharStream wrapped;

  UpperCaseCharStream(CodePointCharStream wrapped) {
    this.wrapped = wrapped;
  }

  @Override
  public void consume() {
    wrapped.consume();
  }

  @Override
  public String getSourceName() {
    return wrapped.getSourceName();
  }

  @Override
  public int index() {
    return wrapped.index();
  }

  @Override
  public int mark() {
    return wrapped.mark();
  }

  @Override
  public void release(int marker) {
    wrapped.release(marker);
  }

  @Override
  public void seek(int where) {
    wrapped.seek(where);
  }

  @Override
  public int size() {
    return wrapped.size();
  }

  @Override
  public String getText(Interval interval) {
    return wrapped.getText(interval);
  }

  @Override
  public int LA(int i) {
    int la = wrapped.LA(i);
    return la == 0 || la == IntStream.EOF ? la : Character.toUpperCase(la);
  }
}
