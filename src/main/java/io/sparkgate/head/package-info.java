/**
 * The request head, read once: the head stage stamps the verified principal onto every request and reads the
 * first message's {@link io.sparkgate.inspect.RequestHead} into the call, after authenticate and before route.
 * With the inspector, the one reader of request bytes: the stages after it read {@code call.head()}.
 */
package io.sparkgate.head;
