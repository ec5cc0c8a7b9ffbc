package sparkgate_test

import data.sparkgate

# 12:00 UTC on 2026-12-07, and 23:00 the same day.
noon := 1796644800000000000

night := noon + ((11 * 3600) * 1000000000)

base := {
	"version": 1,
	"principal": {"name": "alice", "groups": ["analysts"], "tenant": null, "authenticated_by": "static_token"},
	"rpc": "ExecutePlan",
	"pool": "default",
	"backend": {"known": true, "spark_version": "4.0.0", "extensions": [], "catalogs": {}, "default_catalog": "spark_catalog", "default_fs": "file"},
	"facts": [],
	"data": [],
	"data_unresolved": [],
	"local": {"effect": "allow", "rule": "default"},
}

write_finance := object.union(base, {"data": [{
	"target": "table", "catalog": "spark_catalog", "namespace": "finance", "name": "payroll",
	"qualified": "spark_catalog.finance.payroll", "privilege": "modify", "alternative": false, "grant": null,
}]})

read_finance := object.union(base, {"data": [{
	"target": "table", "catalog": "spark_catalog", "namespace": "finance", "name": "payroll",
	"qualified": "spark_catalog.finance.payroll", "privilege": "select", "alternative": false, "grant": null,
}]})

test_plain_request_allowed if {
	sparkgate.allow == {"allow": true} with input as base with time.now_ns as noon
}

test_finance_write_refused_outside_group if {
	d := sparkgate.allow with input as write_finance with time.now_ns as noon
	d.allow == false
	d.rule == "finance-writes"
	contains(d.reason, "group finance")
}

test_finance_write_allowed_for_group_finance if {
	inp := object.union(write_finance, {"principal": {"name": "fiona", "groups": ["finance"], "tenant": null, "authenticated_by": "jwt"}})
	sparkgate.allow == {"allow": true} with input as inp with time.now_ns as noon
}

test_finance_read_allowed if {
	sparkgate.allow == {"allow": true} with input as read_finance with time.now_ns as noon
}

test_finance_sub_namespace_write_refused if {
	inp := object.union(write_finance, {"data": [object.union(write_finance.data[0], {"namespace": "finance.eu"})]})
	d := sparkgate.allow with input as inp with time.now_ns as noon
	d.rule == "finance-writes"
}

contractor := object.union(base, {"principal": {"name": "carl", "groups": [], "tenant": "contractors", "authenticated_by": "jwt"}})

test_contractor_in_office_hours_allowed if {
	sparkgate.allow == {"allow": true} with input as contractor with time.now_ns as noon
}

test_contractor_at_night_refused if {
	d := sparkgate.allow with input as contractor with time.now_ns as night
	d.allow == false
	d.rule == "contractor-hours"
}

test_contractor_udf_refused if {
	inp := object.union(contractor, {"facts": [{"kind": "USER_CODE", "subkind": "python_udf", "attributes": {}}]})
	d := sparkgate.allow with input as inp with time.now_ns as noon
	d.rule == "contractor-udfs"
}

test_several_refusals_first_by_name if {
	inp := object.union(write_finance, {"principal": contractor.principal})
	d := sparkgate.allow with input as inp with time.now_ns as night
	d.rule == "contractor-hours"
}

test_other_version_refused if {
	d := sparkgate.allow with input as object.union(base, {"version": 2}) with time.now_ns as noon
	d.allow == false
	d.rule == "input-version"
}
