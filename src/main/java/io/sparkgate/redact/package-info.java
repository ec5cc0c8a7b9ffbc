/**
 * Redaction of what Spark answers: the values of secret settings in Config answers never reach the client.
 * Decides from the call's request head; reads only responses.
 */
package io.sparkgate.redact;
