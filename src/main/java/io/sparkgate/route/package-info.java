/** Routing: the stage that chooses the backend pool and server each call goes to. */
package io.sparkgate.route;
