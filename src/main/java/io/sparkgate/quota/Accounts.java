package io.sparkgate.quota;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * This replica's accounts, one per principal and one per tenant in use, each found by one map lookup (no lock
 * beyond the map's own): the call path's only shared structure. Idle accounts are dropped by {@link #sweep}.
 */
final class Accounts {
  private final Map<String, Account> principals = new ConcurrentHashMap<>();
  private final Map<String, Account> tenants = new ConcurrentHashMap<>();

  /**
   * The account of {@code name}, made if there is none. It may be retired before the caller takes its
   * monitor: a caller that then finds {@link Account#retired()} asks again.
   */
  Account live(boolean tenant, String name) {
    Map<String, Account> map = tenant ? tenants : principals;
    Account a = map.get(name);
    if (a != null) return a;
    return map.computeIfAbsent(name, tenant ? Account::tenant : Account::principal);
  }

  /** The account of {@code name}, or null: for looking up, never making. */
  Account find(boolean tenant, String name) {
    return name == null ? null : (tenant ? tenants : principals).get(name);
  }

  /** Runs {@code action} on every account, each under its monitor. For the background thread. */
  void forEach(Consumer<Account> action) {
    for (Map<String, Account> map : List.of(principals, tenants)) {
      for (Account a : map.values()) {
        synchronized (a) {
          action.accept(a);
        }
      }
    }
  }

  /** Every account, unlocked, for a pass that takes each monitor itself. */
  List<Account> all() {
    List<Account> out = new ArrayList<>(principals.size() + tenants.size());
    out.addAll(principals.values());
    out.addAll(tenants.values());
    return out;
  }

  /** Drops the accounts idle for {@code idleNanos}; one who took one a moment ago takes a fresh one. */
  void sweep(long now, long idleNanos) {
    for (Map<String, Account> map : List.of(principals, tenants)) {
      for (Iterator<Account> it = map.values().iterator(); it.hasNext(); ) {
        Account a = it.next();
        synchronized (a) {
          if (a.idle(now, idleNanos)) {
            a.retire();
            it.remove();
          }
        }
      }
    }
  }
}
