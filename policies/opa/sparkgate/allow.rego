# Sparkgate's example OPA policy. Sparkgate asks for data.sparkgate.allow (policy.opa.path: sparkgate/allow)
# about every request message its local policy allowed, with the input document of schema version 1
# (policies/opa/input.schema.json). OPA can only refuse more: what the local rules refused never gets here.
#
# The answer is {"allow": true} or {"allow": false, "rule": ..., "reason": ...}; the client sees the reason,
# and Sparkgate's audit record and metrics name the rule as opa:<rule>.
package sparkgate

# A document of another version is refused rather than read with the wrong meaning.
default allow := {
	"allow": false,
	"rule": "input-version",
	"reason": "The organization's Spark policy does not understand this request (input version); ask the platform team.",
}

allow := {"allow": true} if {
	input.version == 1
	count(refusals) == 0
}

# Several refusals: the first by rule name, so the answer is one and stable.
allow := {"allow": false, "rule": rule, "reason": reasons[rule]} if {
	input.version == 1
	count(refusals) > 0
	rule := sort(refusals)[0]
}

reasons := {
	"finance-writes": "Only members of group finance may change tables in the finance namespace.",
	"contractor-hours": "Tenant contractors may use Spark between 07:00 and 19:00 UTC.",
	"contractor-udfs": "Tenant contractors may not run their own code (UDFs) on the shared Spark server.",
}

# Changing anything in a finance namespace (any catalog) needs group finance; reading does not.
refusals contains "finance-writes" if {
	some d in input.data
	d.target in {"table", "namespace"}
	finance_namespace(d.namespace)
	d.privilege != "select"
	not "finance" in input.principal.groups
}

finance_namespace(ns) if ns == "finance"

finance_namespace(ns) if startswith(ns, "finance.")

# Contractors work office hours, UTC. Sparkgate caches decisions (policy.opa.cache.ttl), so a rule on the
# clock takes effect within the cache's time to live.
refusals contains "contractor-hours" if {
	input.principal.tenant == "contractors"
	[hour, _, _] := time.clock([time.now_ns(), "UTC"])
	not office_hours(hour)
}

office_hours(hour) if {
	hour >= 7
	hour < 19
}

# The facts Sparkgate read are there too: code of any kind the client sends to run on the server.
refusals contains "contractor-udfs" if {
	input.principal.tenant == "contractors"
	some f in input.facts
	f.kind == "USER_CODE"
}
