package io.sparkgate.inspect;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sparkgate.fuzz.FuzzRequests;

/**
 * Valid ExecutePlan, AnalyzePlan and Config requests (and any other method's) built from the fuzzer's
 * choices of SQL, tables, functions, config keys, paths and nesting, then possibly mutated byte-wise: deep
 * into the plan walk and the SQL grammar, where random bytes rarely get.
 */
final class BuiltRequestFuzzTest {
  @FuzzTest
  void inspect_builtAndMutatedRequests_readAlikeBothWaysAndNeverEmpty(FuzzedDataProvider data) {
    int variant = data.consumeInt(0, RequestProperties.VARIANTS - 1);
    RequestProperties.check(FuzzRequests.build(data), variant);
  }
}
