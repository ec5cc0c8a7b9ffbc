/**
 * The proxy's configuration as immutable records, read and validated once at start from one YAML file with
 * errors that name the file, line and key; it starts nothing and imports no Sparkgate package but
 * {@code io.sparkgate.yaml}. It also holds the one {@link io.sparkgate.config.Glob} every pattern of that
 * file is read with (a {@code match:} block's, a secret pattern, a policy's name globs), so that a glob means
 * the same wherever it is written.
 */
package io.sparkgate.config;
