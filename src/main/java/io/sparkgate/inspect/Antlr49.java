package io.sparkgate.inspect;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;

/**
 * ANTLR 4.9.3's runtime in a class loader of its own, and the handful of its methods Sparkgate calls by
 * reflection. The build unpacks the runtime's classes and the Hudi grammars generated with it under
 * {@value #PREFIX} in Sparkgate's own jar: resources, not classes of the class path. {@link Loader} defines them
 * from there with the platform class loader as parent, so nothing here ever sees antlr4-runtime 4.13.1 (which
 * refuses 4.9.3's serialized ATN) and Sparkgate's code never links against 4.9.3.
 */
final class Antlr49 {
  static final String PREFIX = "hudi-grammar/";
  private static final String RUNTIME = "org.antlr.v4.runtime.";

  private static volatile Antlr49 instance;

  final ClassLoader loader;
  private final Method fromString;
  private final Constructor<?> tokenStream;
  private final Method fill;
  private final Method removeErrorListeners;
  private final Method addErrorListener;
  private final Method setInterpreter;
  private final Method setErrorHandler;
  private final Constructor<?> bailErrorStrategy;
  private final Constructor<?> lexerSimulator;
  private final Constructor<?> parserSimulator;
  private final Method setPredictionMode;
  private final Object sll;
  private final Constructor<?> contextCache;
  private final Constructor<?> dfa;
  private final Method numberOfDecisions;
  private final Method decisionState;
  private final Field dfaStates;
  private final Object throwingListener;
  final Class<?> terminalNode;
  final Method childCount;
  final Method child;
  final Method ruleIndex;
  final Method symbol;
  final Method tokenType;
  final Method startIndex;
  final Method stopIndex;
  final Method start;
  final Method stop;

  private Antlr49(ClassLoader loader) throws ReflectiveOperationException {
    this.loader = loader;
    Class<?> recognizer = type("Recognizer");
    Class<?> parser = type("Parser");
    Class<?> atn = type("atn.ATN");
    Class<?> dfaType = type("dfa.DFA");
    Class<?> contexts = type("atn.PredictionContextCache");
    Class<?> parserSim = type("atn.ParserATNSimulator");
    Class<?> predictionMode = type("atn.PredictionMode");
    Class<?> listener = type("ANTLRErrorListener");
    fromString = type("CharStreams").getMethod("fromString", String.class);
    tokenStream = type("CommonTokenStream").getConstructor(type("TokenSource"));
    fill = type("BufferedTokenStream").getMethod("fill");
    removeErrorListeners = recognizer.getMethod("removeErrorListeners");
    addErrorListener = recognizer.getMethod("addErrorListener", listener);
    setInterpreter = recognizer.getMethod("setInterpreter", type("atn.ATNSimulator"));
    setErrorHandler = parser.getMethod("setErrorHandler", type("ANTLRErrorStrategy"));
    bailErrorStrategy = type("BailErrorStrategy").getConstructor();
    lexerSimulator =
        type("atn.LexerATNSimulator")
            .getConstructor(type("Lexer"), atn, dfaType.arrayType(), contexts);
    parserSimulator = parserSim.getConstructor(parser, atn, dfaType.arrayType(), contexts);
    setPredictionMode = parserSim.getMethod("setPredictionMode", predictionMode);
    sll = predictionMode.getField("SLL").get(null);
    contextCache = contexts.getConstructor();
    dfa = dfaType.getConstructor(type("atn.DecisionState"), int.class);
    numberOfDecisions = atn.getMethod("getNumberOfDecisions");
    decisionState = atn.getMethod("getDecisionState", int.class);
    dfaStates = dfaType.getField("states");
    throwingListener = Proxy.newProxyInstance(loader, new Class<?>[] {listener}, THROWING);
    terminalNode = type("tree.TerminalNode");
    childCount = type("tree.Tree").getMethod("getChildCount");
    child = type("tree.ParseTree").getMethod("getChild", int.class);
    ruleIndex = type("RuleContext").getMethod("getRuleIndex");
    symbol = terminalNode.getMethod("getSymbol");
    Class<?> token = type("Token");
    tokenType = token.getMethod("getType");
    startIndex = token.getMethod("getStartIndex");
    stopIndex = token.getMethod("getStopIndex");
    start = type("ParserRuleContext").getMethod("getStart");
    stop = type("ParserRuleContext").getMethod("getStop");
  }

  /** The runtime, loaded on first use; an IllegalStateException (retried next time) if the jar lacks it. */
  static Antlr49 get() {
    Antlr49 a = instance;
    if (a != null) return a;
    synchronized (Antlr49.class) {
      if (instance == null) {
        try {
          instance = new Antlr49(new Loader(Antlr49.class.getClassLoader()));
        } catch (ReflectiveOperationException | LinkageError e) {
          throw new IllegalStateException("ANTLR 4.9.3 runtime not found under " + PREFIX, e);
        }
      }
      return instance;
    }
  }

  Class<?> type(String runtimeClass) throws ClassNotFoundException {
    return Class.forName(RUNTIME + runtimeClass, true, loader);
  }

  /** A lexer of {@code lexerClass} over {@code text}, reporting its errors by throwing, with its own DFA cache. */
  Object lexer(Constructor<?> lexerClass, String text, Object atn, Object[] dfa) {
    Object lexer = create(lexerClass, call(fromString, null, text));
    call(setInterpreter, lexer, create(lexerSimulator, lexer, atn, dfa, create(contextCache)));
    throwOnError(lexer);
    return lexer;
  }

  /** Every token of the lexer's text, read at once (so that a lexer error is thrown here). */
  Object tokens(Object lexer) {
    Object tokens = create(tokenStream, lexer);
    call(fill, tokens);
    return tokens;
  }

  /**
   * A parser of {@code parserClass} that throws at its first error, in SLL mode only: Hudi's parsers set SLL
   * and their error listener throws, so they never retry in LL mode either.
   */
  Object parser(
      Constructor<?> parserClass, Object tokens, Object atn, Object[] dfa, Object contexts) {
    Object parser = create(parserClass, tokens);
    Object simulator = create(parserSimulator, parser, atn, dfa, contexts);
    call(setPredictionMode, simulator, sll);
    call(setInterpreter, parser, simulator);
    throwOnError(parser);
    call(setErrorHandler, parser, create(bailErrorStrategy));
    return parser;
  }

  private void throwOnError(Object recognizer) {
    call(removeErrorListeners, recognizer);
    call(addErrorListener, recognizer, throwingListener);
  }

  /** Empty DFA caches for every decision of {@code atn}. */
  Object[] dfa(Object atn) {
    int n = (Integer) call(numberOfDecisions, atn);
    Object[] out = (Object[]) java.lang.reflect.Array.newInstance(dfa.getDeclaringClass(), n);
    for (int i = 0; i < n; i++) out[i] = create(dfa, call(decisionState, atn, i), i);
    return out;
  }

  Object contextCache() {
    return create(contextCache);
  }

  /** The states the caches hold. */
  int states(Object[] dfas) {
    int n = 0;
    try {
      for (Object d : dfas) n += ((Map<?, ?>) dfaStates.get(d)).size();
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
    return n;
  }

  /**
   * Calls a method of the isolated runtime. What it throws comes out unwrapped: a RuntimeException (a syntax
   * error, ParseCancellationException) for the caller to treat as "not read", an Error as itself.
   */
  static Object call(Method m, Object target, Object... args) {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw unwrapped(e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  static Object create(Constructor<?> c, Object... args) {
    try {
      return c.newInstance(args);
    } catch (InvocationTargetException e) {
      throw unwrapped(e.getCause());
    } catch (InstantiationException | IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  private static RuntimeException unwrapped(Throwable t) {
    if (t instanceof RuntimeException r) return r;
    if (t instanceof Error e) throw e;
    return new IllegalStateException(t);
  }

  /** What the error listener throws: a lexer's error is not skipped over, as its default listener would. */
  static final class SyntaxError extends RuntimeException {
    SyntaxError(String message) {
      super(message, null, false, false);
    }
  }

  /** ANTLRErrorListener: syntaxError throws; the ambiguity reports are ignored. */
  private static final InvocationHandler THROWING =
      (proxy, method, args) ->
          switch (method.getName()) {
            case "syntaxError" ->
                throw new SyntaxError("line " + args[2] + ":" + args[3] + " " + args[4]);
            case "hashCode" -> System.identityHashCode(proxy);
            case "equals" -> proxy == args[0];
            case "toString" -> "throwing error listener";
            default -> null;
          };

  /**
   * Defines classes from the resources under {@value #PREFIX}; its parent is the platform class loader, so the
   * application class path (antlr4-runtime 4.13.1 included) is out of sight.
   */
  private static final class Loader extends ClassLoader {
    static {
      registerAsParallelCapable();
    }

    private final ClassLoader resources;

    Loader(ClassLoader resources) {
      super("hudi-grammar", ClassLoader.getPlatformClassLoader());
      this.resources = resources;
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
      try (InputStream in =
          resources.getResourceAsStream(PREFIX + name.replace('.', '/') + ".class")) {
        if (in == null) throw new ClassNotFoundException(name);
        byte[] bytes = in.readAllBytes();
        return defineClass(name, bytes, 0, bytes.length);
      } catch (IOException e) {
        throw new ClassNotFoundException(name, e);
      }
    }
  }
}
