{{/* Name of the chart. */}}
{{- define "tunnelbench.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified name: the release name, with the chart name unless it already holds it. */}}
{{- define "tunnelbench.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "tunnelbench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tunnelbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end }}

{{- define "tunnelbench.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "tunnelbench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "tunnelbench.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tunnelbench.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tunnelbench.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The ValidatingWebhookConfiguration: cluster-scoped, so named with the release's namespace. */}}
{{- define "tunnelbench.webhookConfiguration" -}}
{{- printf "%s-%s" (include "tunnelbench.fullname" .) .Release.Namespace | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The node reader's labels: not the operator's selector labels (control-plane), which would make
the Deployment select its pods. */}}
{{- define "tunnelbench.nodeReaderLabels" -}}
app.kubernetes.io/name: {{ include "tunnelbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: node-reader
{{- end }}

{{/*
The Secret whose key uri connects the operator to the history store: the chart's CloudNativePG
Cluster's app Secret, or history.secretName.
*/}}
{{- define "tunnelbench.historySecret" -}}
{{- if .Values.history.cluster.create -}}
{{ include "tunnelbench.fullname" . }}-history-app
{{- else if .Values.history.secretName -}}
{{ .Values.history.secretName }}
{{- else -}}
{{ fail "history.enabled needs history.cluster.create or history.secretName (a Secret with key uri)" }}
{{- end -}}
{{- end }}
