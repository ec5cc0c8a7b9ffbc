package io.sparkgate.inspect;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sparkgate.fuzz.FuzzRequests;

/**
 * Any bytes as any method's request (the first byte picks the method): the corpus holds valid requests the
 * fuzzer mutates, so both well-formed plans and every way of breaking their encoding are reached.
 */
final class RequestBytesFuzzTest {
  @FuzzTest
  void inspect_anyBytes_readAlikeBothWaysAndNeverEmpty(byte[] input) {
    FuzzRequests.Request request = FuzzRequests.raw(input);
    for (int variant = 0; variant < RequestProperties.VARIANTS; variant++)
      RequestProperties.check(request, variant);
  }
}
