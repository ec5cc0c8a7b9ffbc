package io.sparkgate.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sparkgate admin revoke|restore|revocations}: the admin API's kill switch from a terminal. Exit status: 0
 * done, 1 the proxy refused or could not be reached (its message printed), 2 bad arguments.
 */
@Command(
    name = "admin",
    mixinStandardHelpOptions = true,
    description = "Act on a running proxy through its admin listener.",
    subcommands = {
      AdminCommand.Revoke.class,
      AdminCommand.Restore.class,
      AdminCommand.Revocations.class
    })
final class AdminCommand implements Runnable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String EXIT =
      "%nExit status: 0 done, 1 refused by the proxy or not reached, 2 bad arguments.";

  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: revoke, restore or revocations");
  }

  /** Whom a revocation names: a principal, or one JWT by its id. */
  static final class Target {
    @Option(
        names = "--principal",
        required = true,
        paramLabel = "NAME",
        description = "A principal's name, exactly as the proxy reports it.")
    String principal;

    @Option(
        names = "--jti",
        required = true,
        paramLabel = "ID",
        description = "A JWT's id (its jti claim): that token only.")
    String jti;

    String kind() {
      return principal != null ? "principal" : "token";
    }

    String name() {
      String name = principal != null ? principal : jti;
      if (name.isBlank()) {
        throw new Refused((principal != null ? "--principal" : "--jti") + " must not be empty");
      }
      return name;
    }

    /** The API path: the name as one percent-encoded segment. */
    String path() {
      return "/api/"
          + (principal != null ? "principals/" : "tokens/")
          + AdminClient.segment(name())
          + "/revoke";
    }
  }

  /** Runs a command's body: one line on stderr and exit 2 or 1 when it cannot do what was asked. */
  private static int run(CommandSpec spec, Callable<String> body) {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try {
      out.print(body.call());
      return 0;
    } catch (Refused e) {
      err.println(spec.qualifiedName() + ": " + e.getMessage());
      return 2;
    } catch (AdminClient.Failed e) {
      err.println(spec.qualifiedName() + ": " + e.getMessage());
      return 1;
    } catch (Exception e) {
      err.println(spec.qualifiedName() + ": " + e);
      return 1;
    } finally {
      out.flush();
      err.flush();
    }
  }

  private static JsonNode json(String body) {
    try {
      return JSON.readTree(body);
    } catch (IOException e) {
      throw new AdminClient.Failed("the answer is not JSON: is --url the admin listener?");
    }
  }

  @Command(
      name = "revoke",
      mixinStandardHelpOptions = true,
      description = {
        "Cut off a principal, or one JWT by its id, on every replica that shares the proxy's"
            + " revocations: its calls are refused, a principal's running operations interrupted and"
            + " its sessions released. The reason goes to the audit log, never to the client."
      },
      footer = EXIT)
  static final class Revoke implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin AdminOptions admin;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Option(
        names = "--reason",
        required = true,
        paramLabel = "TEXT",
        description = "Why, for the audit log (500 characters at most).")
    String reason;

    @Option(
        names = "--until",
        paramLabel = "TIME",
        description =
            "When the revocation ends by itself: RFC 3339 with its offset, e.g."
                + " 2026-12-31T18:00:00Z; default until restored.")
    String until;

    @Override
    public Integer call() {
      return run(
          spec,
          () -> {
            String path = target.path();
            ObjectNode body = JSON.createObjectNode().put("reason", reason);
            if (until != null) {
              try {
                OffsetDateTime.parse(until); // as the proxy reads it
              } catch (DateTimeParseException e) {
                throw new Refused(
                    "--until must be an RFC 3339 time with its offset, e.g. 2026-12-31T18:00:00Z,"
                        + " got '"
                        + until
                        + "'");
              }
              body.put("until", until);
            }
            JsonNode answer = json(admin.client().post(path, body));
            JsonNode revoked = answer.path("revoked");
            String ends =
                revoked.path("until").isTextual() ? " until " + revoked.get("until").asText() : "";
            return "revoked "
                + target.kind()
                + " "
                + target.name()
                + ends
                + " (kept in "
                + answer.path("kept_in").asText("?")
                + ")\n";
          });
    }
  }

  @Command(
      name = "restore",
      mixinStandardHelpOptions = true,
      description = "End a revocation: the principal or token is let in again.",
      footer = EXIT)
  static final class Restore implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin AdminOptions admin;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Override
    public Integer call() {
      return run(
          spec,
          () -> {
            admin.client().delete(target.path());
            return "restored " + target.kind() + " " + target.name() + "\n";
          });
    }
  }

  @Command(
      name = "revocations",
      mixinStandardHelpOptions = true,
      description =
          "List the principals and tokens revoked now, and whether anonymous callers pass.",
      footer = EXIT)
  static final class Revocations implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin AdminOptions admin;

    @Option(names = "--json", description = "Print the API's JSON as it came.")
    boolean raw;

    @Override
    public Integer call() {
      return run(
          spec,
          () -> {
            String body = admin.client().get("/api/revocations");
            return raw ? body.strip() + "\n" : table(json(body));
          });
    }

    static String table(JsonNode list) {
      StringBuilder out = new StringBuilder();
      String anonymous = list.path("anonymous").asText("?");
      out.append("anonymous: ")
          .append(anonymous)
          .append(
              switch (anonymous) {
                case "fallback" -> " (callers without credentials are served as user 'anonymous')";
                case "only" -> " (every caller is served as user 'anonymous')";
                default -> "";
              })
          .append('\n');
      out.append("kept in: ").append(list.path("kept_in").asText("?")).append('\n');
      int denied = list.path("denied_jti_file_ids").asInt(0);
      if (denied > 0) out.append("denied jti file: ").append(denied).append(" ids\n");
      JsonNode revoked = list.path("revoked");
      if (revoked.isEmpty()) return out.append("revoked: none\n").toString();
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"KIND", "NAME", "REASON", "UNTIL", "OPERATOR", "AT"});
      for (JsonNode r : revoked) {
        rows.add(
            new String[] {
              cell(r.path("kind").asText()),
              cell(r.path("name").asText()),
              cell(r.path("reason").asText()),
              r.path("until").isTextual() ? cell(r.get("until").asText()) : "-",
              cell(r.path("operator").asText()),
              cell(r.path("at").asText())
            });
      }
      int[] width = new int[6];
      for (String[] row : rows) {
        for (int i = 0; i < row.length; i++) width[i] = Math.max(width[i], row[i].length());
      }
      for (String[] row : rows) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < row.length; i++) {
          line.append(
              i == row.length - 1 ? row[i] : String.format("%-" + width[i] + "s  ", row[i]));
        }
        out.append(line.toString().stripTrailing()).append('\n');
      }
      return out.toString();
    }

    /** A reason is free text from whoever revoked: no line break or terminal escape reaches the table. */
    private static String cell(String text) {
      return text.replaceAll("\\p{Cntrl}", " ");
    }
  }
}
