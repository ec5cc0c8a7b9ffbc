/**
 * Data access: which principals, groups and tenants may read and write which tables, namespaces and paths
 * (a policy's {@code data_access} section). {@link io.sparkgate.grants.Accesses} reads from a request's facts
 * every table, namespace and path it reaches and the privilege each needs; {@link
 * io.sparkgate.grants.DataAccess} holds the compiled grants, indexed by catalog and namespace, and answers
 * whether a principal holds each one. Not a stage: the policy stage decides with it after its rules. {@link
 * io.sparkgate.grants.ItemNames} is how a policy file names its grants and its rules alike.
 */
package io.sparkgate.grants;
