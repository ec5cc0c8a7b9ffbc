package io.sparkgate.quota;

import io.sparkgate.redis.Script;
import java.util.List;

/**
 * The Lua scripts {@link Shared} runs in Redis: each change to the shared counts is one script, atomic, and
 * timed by Redis's clock ({@code TIME}). Keys and arguments are documented beside each.
 */
final class Scripts {
  private Scripts() {}

  private static final String NOW =
      """
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      """;

  // A bucket's level now: refilled since it was written; a missing bucket is full (it expires only
  // once it would be).
  private static final String LEVEL =
      """
      local function level(key, rate, burst)
        local v = redis.call('HMGET', key, 'tokens', 'ts')
        local tokens, ts = tonumber(v[1]), tonumber(v[2])
        if tokens == nil or ts == nil then return burst end
        local elapsed = now - ts
        if elapsed < 0 then elapsed = 0 end
        return math.min(burst, tokens + elapsed * rate / 1000)
      end
      local function store(key, lvl, rate, burst)
        redis.call('HSET', key, 'tokens', tostring(lvl), 'ts', now)
        redis.call('PEXPIRE', key, math.ceil((burst - lvl) * 1000 / rate) + 1000)
      end
      """;

  /**
   * The start of an ExecutePlan, all or nothing: a token from the principal's and the tenant's bucket and a
   * slot in each one's operations. KEYS: principal operations, tenant operations, principal bucket, tenant
   * bucket. ARGV: member, lease ms, principal slots, tenant slots, principal rate, burst, tenant rate, burst
   * (0: no such limit). Returns {0, principal level, tenant level} (in thousandths of a token), or {refused
   * limit (1 principal rate, 2 tenant rate, 3 principal slots, 4 tenant slots), limit, retry ms}.
   */
  static final Script START =
      new Script(
          NOW
              + LEVEL
              + """
              local member, lease = ARGV[1], tonumber(ARGV[2])
              local pSlots, tSlots = tonumber(ARGV[3]), tonumber(ARGV[4])
              local pRate, pBurst = tonumber(ARGV[5]), tonumber(ARGV[6])
              local tRate, tBurst = tonumber(ARGV[7]), tonumber(ARGV[8])
              local pLevel, tLevel = 0, 0
              if pRate > 0 then
                pLevel = level(KEYS[3], pRate, pBurst)
                if pLevel < 1 then return {1, pRate, math.ceil((1 - pLevel) * 1000 / pRate)} end
              end
              if tRate > 0 then
                tLevel = level(KEYS[4], tRate, tBurst)
                if tLevel < 1 then return {2, tRate, math.ceil((1 - tLevel) * 1000 / tRate)} end
              end
              local function room(key, limit)
                if limit <= 0 then return true end
                redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
                if redis.call('ZSCORE', key, member) then return true end
                return redis.call('ZCARD', key) < limit
              end
              if not room(KEYS[1], pSlots) then return {3, pSlots, 1000} end
              if not room(KEYS[2], tSlots) then return {4, tSlots, 1000} end
              if pRate > 0 then pLevel = pLevel - 1; store(KEYS[3], pLevel, pRate, pBurst) end
              if tRate > 0 then tLevel = tLevel - 1; store(KEYS[4], tLevel, tRate, tBurst) end
              for i, limit in ipairs({pSlots, tSlots}) do
                if limit > 0 then
                  redis.call('ZADD', KEYS[i], now + lease, member)
                  redis.call('PEXPIRE', KEYS[i], 2 * lease)
                end
              end
              return {0, math.floor(pLevel * 1000), math.floor(tLevel * 1000)}
              """);

  /**
   * Leases renewed. KEYS: the epoch marker, then sets. ARGV: lease ms, this replica's epoch candidate, then
   * per set its member and "xx" (renew only if held) or "add" (hold it: taken while Redis was away). An
   * epoch marker that was missing means Redis lost its data: every member is then added. Returns the epoch.
   */
  static final Script RENEW =
      new Script(
          NOW
              + """
              local epoch = redis.call('GET', KEYS[1])
              local fresh = not epoch
              if fresh then
                epoch = ARGV[2]
                redis.call('SET', KEYS[1], epoch)
              end
              local lease = tonumber(ARGV[1])
              for i = 2, #KEYS do
                local member, mode = ARGV[2 * i - 1], ARGV[2 * i]
                if fresh or mode == 'add' then
                  redis.call('ZADD', KEYS[i], now + lease, member)
                else
                  redis.call('ZADD', KEYS[i], 'XX', now + lease, member)
                end
                redis.call('PEXPIRE', KEYS[i], 2 * lease)
              end
              return epoch
              """);

  /**
   * Calls admitted by one replica, taken from the shared buckets; returns each bucket's level after (in
   * thousandths). KEYS: buckets. ARGV: per bucket the count, rate, burst. A bucket may go into debt: the
   * replicas admitted more than it held, and it is paid back before anyone is admitted again.
   */
  static final Script SYNC =
      new Script(
          NOW
              + LEVEL
              + """
              local out = {}
              for i, key in ipairs(KEYS) do
                local used, rate, burst = tonumber(ARGV[3*i-2]), tonumber(ARGV[3*i-1]), tonumber(ARGV[3*i])
                local lvl = level(key, rate, burst)
                if used > 0 then
                  lvl = lvl - used
                  store(key, lvl, rate, burst)
                end
                out[i] = math.floor(lvl * 1000)
              end
              return out
              """);

  /** One operation's slots given back. KEYS: sets. ARGV: the member. */
  static final Script RELEASE =
      new Script(
          """
          local n = 0
          for _, key in ipairs(KEYS) do
            n = n + redis.call('ZREM', key, ARGV[1])
          end
          return n
          """);

  /** The operations of one session released. KEYS: sets. ARGV: the members' prefix. */
  static final Script RELEASE_SESSION =
      new Script(
          """
          local n = 0
          for _, key in ipairs(KEYS) do
            for _, m in ipairs(redis.call('ZRANGE', key, 0, -1)) do
              if string.sub(m, 1, #ARGV[1]) == ARGV[1] then
                redis.call('ZREM', key, m)
                n = n + 1
              end
            end
          end
          return n
          """);

  static final List<Script> ALL = List.of(START, RENEW, SYNC, RELEASE, RELEASE_SESSION);
}
