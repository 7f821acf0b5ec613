# Stuck traces: running, no live lease on their step, quiet for longer than
# their node's timeout + 60 s (inboxflow/stuck.py). Nothing logs about a trace
# nobody runs, so a sweep looks for them: Cloud Scheduler calls the renew-watch
# function at /stuck-traces, which logs one WARNING line "trace stuck" (with
# jsonPayload.trace_id, .graph, .node, .step) per stuck trace per sweep; the
# metric counts those lines and the policy opens an incident on any.

variable "stuck_trace_sweep_schedule" {
  type        = string
  description = "Cron schedule of the stuck-trace sweep (traces running longer than their nodes' timeouts)."
  default     = "*/10 * * * *"
}

resource "google_cloud_scheduler_job" "stuck_traces" {
  project          = var.project_id
  region           = var.region
  name             = "inboxflow-stuck-traces"
  description      = "Log the traces nothing runs (inboxflow traces --stuck), for the stuck-traces alert"
  schedule         = var.stuck_trace_sweep_schedule
  time_zone        = var.scheduler_time_zone
  attempt_deadline = "120s"

  retry_config {
    retry_count          = 1
    min_backoff_duration = "60s"
    max_backoff_duration = "300s"
  }

  http_target {
    http_method = "POST"
    uri         = "${module.renew_watch.function_uri}/stuck-traces"

    oidc_token {
      service_account_email = google_service_account.scheduler_invoker.email
      audience              = module.renew_watch.function_uri
    }
  }

  depends_on = [module.renew_watch]
}

resource "google_logging_metric" "stuck_traces" {
  project     = var.project_id
  name        = "inboxflow/stuck_traces"
  description = "Stuck traces the sweep found (the renew-watch function's 'trace stuck' line, one per trace per sweep), by graph and node."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${var.service_functions["renew_watch"].function_name}\" AND jsonPayload.message=\"trace stuck\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "inboxflow stuck traces"

    labels {
      key         = "graph"
      value_type  = "STRING"
      description = "Graph of the trace"
    }

    labels {
      key         = "node"
      value_type  = "STRING"
      description = "Node whose step nothing runs"
    }
  }

  label_extractors = {
    graph = "EXTRACT(jsonPayload.graph)"
    node  = "EXTRACT(jsonPayload.node)"
  }

  depends_on = [google_project_service.enabled]
}

resource "google_monitoring_alert_policy" "stuck_traces" {
  project               = var.project_id
  display_name          = "inboxflow: traces running longer than their nodes' timeouts"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "ERROR"

  conditions {
    display_name = "stuck traces > 0"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.stuck_traces.name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["metric.labels.graph", "metric.labels.node"]
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "A trace is running but no delivery runs its step: its lease ran out (or none was taken) and it has been quiet for longer than its node's timeout. The function of the node in the incident died or lost its message. `inboxflow traces --stuck` lists them; `inboxflow retry TRACE` publishes the step again (a late duplicate is dropped). ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled, time_sleep.log_metrics_ready]
}
