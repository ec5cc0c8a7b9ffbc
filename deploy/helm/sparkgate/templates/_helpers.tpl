{{/* Names and labels, as helm create makes them. */}}
{{- define "sparkgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sparkgate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "sparkgate.chartLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "sparkgate.labels" -}}
{{ include "sparkgate.chartLabels" . }}
{{ include "sparkgate.selectorLabels" . }}
{{- end }}

{{- define "sparkgate.redisLabels" -}}
{{ include "sparkgate.chartLabels" . }}
{{ include "sparkgate.redisSelectorLabels" . }}
{{- end }}

{{/* The proxy's pods. NetworkPolicies admit exactly these, so the Redis pods must not match them. */}}
{{- define "sparkgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sparkgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: proxy
{{- end }}

{{- define "sparkgate.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "sparkgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{/*
The proxy's configuration: .Values.config with the paths of what the chart mounts and the addresses
Kubernetes needs filled in where the values leave them out. Rendered as YAML; templates read it back with
fromYaml, so the ports in the Deployment are always the ones in the configuration.
*/}}
{{- define "sparkgate.config" -}}
{{- $c := deepCopy (.Values.config | default dict) }}
{{- /* pools replace backend; Helm merges the user's config with the default backend, so drop it here. */}}
{{- if $c.pools }}
{{- $_ := unset $c "backend" }}
{{- end }}
{{- /* Engines listen in the pod that started them, on a bind_address one ConfigMap cannot set per pod. */}}
{{- range $name, $pool := ($c.pools | default dict) }}
{{- if and (kindIs "map" $pool) (hasKey $pool "engines") (gt (int $.Values.replicaCount) 1) }}
{{- fail (printf "config.pools.%s.engines: engines listen in the pod that started them, and one ConfigMap cannot give each pod's bind_address its own address for the other replicas to reach: set replicaCount: 1 (deploy/README.md, \"Engines on demand\")" $name) }}
{{- end }}
{{- end }}
{{- $listen := merge ($c.listen | default dict) (dict "address" "0.0.0.0" "port" 15003) }}
{{- $_ := set $c "listen" $listen }}
{{- if $listen.plaintext }}
{{- $_ := unset $c "tls" }}
{{- else }}
{{- $tls := $c.tls | default dict }}
{{- if .Values.secrets.tls }}
{{- $tls = merge $tls (dict "cert_file" "/etc/sparkgate/tls/tls.crt" "key_file" "/etc/sparkgate/tls/tls.key") }}
{{- end }}
{{- if .Values.secrets.clientCa }}
{{- $tls = merge $tls (dict "client_ca_file" "/etc/sparkgate/client-ca/ca.crt") }}
{{- end }}
{{- $_ := set $c "tls" $tls }}
{{- end }}
{{- $admin := merge ($c.admin | default dict) (dict "address" "0.0.0.0" "port" 9464) }}
{{- if .Values.secrets.adminToken }}
{{- $admin = merge $admin (dict "token_file" "/etc/sparkgate/admin/token") }}
{{- end }}
{{- if .Values.secrets.adminTls }}
{{- $_ := set $admin "tls" (merge ($admin.tls | default dict) (dict "cert_file" "/etc/sparkgate/admin-tls/tls.crt" "key_file" "/etc/sparkgate/admin-tls/tls.key")) }}
{{- end }}
{{- if has $admin.address (list "127.0.0.1" "localhost" "::1") }}
{{- fail "config.admin.address: the kubelet probes /healthz and /readyz from the node, so the admin port cannot be bound to loopback" }}
{{- end }}
{{- if ($admin.tls | default dict).client_ca_file }}
{{- fail "config.admin.tls.client_ca_file: this chart does not mount an admin client CA; use secrets.adminToken for the admin listener's credentials" }}
{{- end }}
{{- if not $admin.token_file }}
{{- fail "config.admin is bound beyond loopback (the kubelet probes it there): set secrets.adminToken (admin.token_file)" }}
{{- end }}
{{- $_ := set $c "admin" $admin }}
{{- $auth := $c.auth | default dict }}
{{- /* client_cert: {} is complete (principal from the CN), so its key counts, not its content. */}}
{{- $method := or $auth.jwt $auth.static_tokens (hasKey $auth "client_cert") }}
{{- $anonymous := toString $auth.anonymous }}
{{- if not (or $method (has $anonymous (list "true" "fallback"))) }}
{{- fail "config.auth: no authentication method: set config.auth.jwt, config.auth.static_tokens or config.auth.client_cert (docs/authentication.md); to let every caller in as user \"anonymous\", set config.auth.anonymous: true" }}
{{- end }}
{{- if and $method (eq $anonymous "true") }}
{{- fail "config.auth.anonymous: true is for anonymous alone; beside jwt, static_tokens or client_cert write anonymous: fallback (callers without credentials become \"anonymous\")" }}
{{- end }}
{{- if .Values.redis.enabled }}
{{- $url := printf "redis://%s-redis:6379/0" (include "sparkgate.fullname" .) }}
{{- $_ := set $c "sessions" (merge ($c.sessions | default dict) (dict "store" "redis" "redis_url" $url)) }}
{{- end }}
{{- toYaml $c }}
{{- end }}

{{/* A duration of the configuration (500ms, 30s, 5m, 1h) in whole seconds, rounded up. */}}
{{- define "sparkgate.seconds" -}}
{{- $d := toString . }}
{{- if eq $d "0" }}0
{{- else if hasSuffix "ms" $d }}{{ div (add (trimSuffix "ms" $d | atoi) 999) 1000 }}
{{- else if hasSuffix "us" $d }}1
{{- else if hasSuffix "s" $d }}{{ trimSuffix "s" $d | atoi }}
{{- else if hasSuffix "m" $d }}{{ mul (trimSuffix "m" $d | atoi) 60 }}
{{- else if hasSuffix "h" $d }}{{ mul (trimSuffix "h" $d | atoi) 3600 }}
{{- else if hasSuffix "d" $d }}{{ mul (trimSuffix "d" $d | atoi) 86400 }}
{{- else }}{{ fail (printf "not a duration: %q" $d) }}
{{- end }}
{{- end }}
