/**
 * YAML files (configuration, policies, policy tests) read as nodes that keep their line, so every error can
 * name file, line and key, and the units sizes and durations are written in; it knows no key of any file and
 * imports no other Sparkgate package.
 */
package io.sparkgate.yaml;
