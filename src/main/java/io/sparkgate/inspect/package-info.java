/**
 * Request inspection: every Spark Connect request message becomes flat, immutable {@link
 * io.sparkgate.inspect.Facts} that policies match on.
 *
 * <p>SQL is read with Spark's own ANTLR grammar (the generated SqlBaseLexer/SqlBaseParser of spark-sql-api
 * 4.0.0, which reference no Scala class; only antlr4-runtime 4.13.1 is needed, and the shaded jar keeps only
 * those classes). Grammar differences that matter when the backend is Spark 3.5 rather than 4.x:
 *
 * <ul>
 *   <li>{@code WITH (k = v)} options after a table name (optionsClause) are 4.0+; 3.5 rejects them, so a
 *       4.0 parse reports options a 3.5 server would refuse to parse anyway.
 *   <li>SQL scripting ({@code BEGIN ... END}, compoundOrSingleStatement), {@code EXECUTE IMMEDIATE}, pipe
 *       syntax ({@code |>}), {@code SET CATALOG} with a string literal and {@code IDENTIFIER(...)} in more
 *       places are 4.0 grammar; on 3.5 they fail to parse on the server.
 *   <li>The temporalClause rule (VERSION|SYSTEM_VERSION / TIMESTAMP|SYSTEM_TIME AS OF) is unchanged 3.5-4.2;
 *       4.2 adds CHANGES FROM ... TO ..., which this 4.0 grammar does not parse (an unparseable_sql fact).
 *   <li>Spark's grammar is permissive: with ANSI reserved keywords off (the default) {@code SELECT * FROM}
 *       parses ({@code FROM} as an alias); our facts follow the grammar, not intuition.
 * </ul>
 *
 * <p>A statement Spark's grammar refuses is tried with the grammars of the session extensions the backend
 * loads ({@code ExtensionSql}): Iceberg's, generated at build time from the {@code .g4}
 * in its sources jar into {@code io.sparkgate.inspect.grammar.iceberg}, and Hudi's, the classes ANTLR 4.9.3
 * generated for its release, run with that runtime in a class loader of their own ({@code HudiGrammar}).
 *
 * <p>Every string the backend's session parser reads enters through {@code SqlInspector}, which first does
 * what SparkSqlParser does first: a string that variable substitution would rewrite is refused unread
 * (variable_substitution), and the grammar's switches are the session's {@link
 * io.sparkgate.inspect.ParserSettings}. Out of reach of a static parse, and so reported as UNCLASSIFIED:
 * {@code IDENTIFIER(:param)} and {@code EXECUTE IMMEDIATE variable} (hidden_identifier, dynamic_sql).
 */
package io.sparkgate.inspect;
