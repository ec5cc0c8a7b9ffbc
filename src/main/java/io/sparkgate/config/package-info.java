/**
 * The proxy's configuration as immutable records, read and validated once at start from one YAML file with
 * errors that name the file, line and key; it starts nothing and imports no Sparkgate package but
 * {@code io.sparkgate.yaml}.
 */
package io.sparkgate.config;
