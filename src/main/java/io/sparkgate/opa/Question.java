package io.sparkgate.opa;

import io.sparkgate.grants.Verdict;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import java.util.List;
import java.util.Optional;

/**
 * What OPA is asked about one request message, as the decide stage knows it once the local policy allowed it.
 *
 * @param principal the verified identity's name (the client's declared user id without authentication)
 * @param authenticatedBy how it was verified ({@code jwt}, {@code static_token}, {@code client_cert}, {@code
 *     anonymous}, {@code none})
 * @param pool the pool whose policy decided
 * @param profile the pool's backend as profiled; null while unknown
 * @param facts the inspector's facts, enriched as the local rules saw them
 * @param verdict what the grants said, or null when the policy has no data_access section
 * @param localEffect {@code allow} or {@code rewrite}
 * @param localRule the local rule that decided ({@code default} when none matched)
 */
public record Question(
    String rpc,
    String principal,
    List<String> groups,
    Optional<String> tenant,
    String authenticatedBy,
    String pool,
    BackendProfile profile,
    Facts facts,
    Verdict verdict,
    String localEffect,
    String localRule) {

  public Question {
    groups = List.copyOf(groups);
  }
}
