/**
 * Asking an Open Policy Agent about a request the local policy allowed: the input document (versioned, see
 * {@code policies/opa/input.schema.json}), the HTTP client with its decision cache, and reading OPA's answer.
 * OPA can only refuse more; {@code policy.DecideStage} asks it and turns its refusal into Spark's form.
 */
package io.sparkgate.opa;
