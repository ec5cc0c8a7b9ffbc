package io.sparkgate.cli;

public final class Main {
  public static void main(String[] args) {}
}
