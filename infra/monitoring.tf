# Alerts, log-based metrics and the operations dashboard.
#
# Log contract (inboxflow.logs: one JSON object per line on Cloud Run, which
# Cloud Logging turns into jsonPayload, its "severity" into the entry's):
#   - lines of a step carry jsonPayload.trace_id, .graph, .node (the node's
#     name), .step and .attempt; the line of a step commit that changes the
#     trace's status also carries .outcome (the new status: needs_review,
#     failed, waiting, done, ...), exactly one line per status change;
#   - that commit line of a step that called the LLM carries .llm_tokens
#     (input + output tokens over the step's calls);
#   - failures are logged at severity ERROR or above.
# The metrics below filter on exactly these fields.

# Every alert mails alert_email (a channel created here), plus any channel
# listed in notification_channels. alert_email has no default: an incident
# nobody receives is how a lapsed Gmail watch goes unnoticed, and the
# account that applies (the deployer service account, in a build) has no
# mailbox to default to.
variable "alert_email" {
  type        = string
  description = "Email address every alert and the budget notify (an email notification channel created by infra/): a person or, better, an on-call group. Required."

  validation {
    condition     = can(regex("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", var.alert_email))
    error_message = "alert_email must be one email address."
  }
}

variable "notification_channels" {
  type        = list(string)
  description = "More Cloud Monitoring notification channel ids (projects/P/notificationChannels/N) every alert and the budget notify besides alert_email; create them once in the console (PagerDuty, Slack...)."
  default     = []

  validation {
    condition     = alltrue([for id in var.notification_channels : can(regex("^projects/[^/]+/notificationChannels/[^/]+$", id))])
    error_message = "notification_channels must be full ids: projects/PROJECT/notificationChannels/ID."
  }
}

variable "backlog_alert_age_seconds" {
  type        = number
  description = "Alert when the oldest unacknowledged message on a node's push subscription is older than this (seconds). Retries back off up to push_maximum_backoff, so keep it above that."
  default     = 1800
}

variable "function_5xx_per_second" {
  type        = number
  description = "Alert when a function answers 5xx more often than this (per second, averaged over 5 minutes)."
  default     = 0.05
}

resource "google_monitoring_notification_channel" "email" {
  project      = var.project_id
  display_name = "inboxflow ${var.environment} alerts"
  description  = "alert_email: every inboxflow alert and the budget (monitoring.tf)."
  type         = "email"
  labels = {
    email_address = var.alert_email
  }

  depends_on = [google_project_service.enabled]
}

locals {
  # The channel's id is its name, projects/P/notificationChannels/N.
  alert_channels = concat([google_monitoring_notification_channel.email.id], var.notification_channels)

  alert_documentation_footer = "Runbook: docs/deploy.md (Operating it). Repair: `inboxflow dlq list|show|replay`, `inboxflow retry TRACE`."

  # Subscription names come from inboxflow.naming through the export: push
  # subscriptions end in -push, dead-letter pull subscriptions in -dlq-sub,
  # plus the shared one. tests/infra checks these patterns against every
  # generated name.
  dead_letter_subscription_pattern = "inboxflow-.+-dlq-sub|${var.shared_dead_letter_topic}-sub"
  push_subscription_pattern        = "inboxflow-.+-push"

  # Cloud Run services of our functions (all function names start with it).
  function_prefix = "inboxflow-"

  # Traces start with a publish to an entry node's topic.
}

# --- log-based metrics -----------------------------------------------------------

resource "google_logging_metric" "traces_started" {
  project     = var.project_id
  name        = "inboxflow/traces_started"
  description = "Traces started (the runtime's 'trace started' line, one per email routed to a graph), by graph."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=~\"^${local.function_prefix}\" AND jsonPayload.message=\"trace started\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "inboxflow traces started"

    labels {
      key         = "graph"
      value_type  = "STRING"
      description = "Graph the email was routed to"
    }
  }

  label_extractors = {
    graph = "EXTRACT(jsonPayload.graph)"
  }

  depends_on = [google_project_service.enabled]
}

resource "google_logging_metric" "needs_review" {
  project     = var.project_id
  name        = "inboxflow/needs_review"
  description = "Traces that went to needs_review (the status-change line with outcome needs_review), by graph and node."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=~\"^${local.function_prefix}\" AND jsonPayload.outcome=\"needs_review\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "inboxflow traces in needs_review"

    labels {
      key         = "graph"
      value_type  = "STRING"
      description = "Graph of the trace"
    }

    labels {
      key         = "node"
      value_type  = "STRING"
      description = "Node whose step failed"
    }
  }

  label_extractors = {
    graph = "EXTRACT(jsonPayload.graph)"
    node  = "EXTRACT(jsonPayload.node)"
  }

  depends_on = [google_project_service.enabled]
}

resource "google_logging_metric" "function_errors" {
  project     = var.project_id
  name        = "inboxflow/function_errors"
  description = "Log lines at severity ERROR or above from any inboxflow function (crashed nodes, failed Gmail calls, unreadable input)."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=~\"^${local.function_prefix}\" AND severity>=ERROR"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "inboxflow function errors"
  }

  depends_on = [google_project_service.enabled]
}

# The scheduler's own record of each attempt (log cloudscheduler.googleapis.com/
# executions, resource cloud_scheduler_job labelled job_id): an attempt that
# failed (the function answered 500 because some mailbox's users.watch failed,
# or did not answer by attempt_deadline) ends in an AttemptFinished entry at
# ERROR with its status; a successful one ends at INFO, and AttemptStarted is
# INFO. Audit logs (cloudaudit.googleapis.com) are left out: a failed
# UpdateJob of a broken deploy is an ERROR too, and if it names the job it
# must not page as a failed renewal.
resource "google_logging_metric" "renew_watch_job_failures" {
  project     = var.project_id
  name        = "inboxflow/renew_watch_job_failures"
  description = "Failed Cloud Scheduler attempts of the daily Gmail watch renewal job."
  filter      = "resource.type=\"cloud_scheduler_job\" AND resource.labels.job_id=\"${google_cloud_scheduler_job.renew_watch.name}\" AND severity>=ERROR AND NOT logName:\"cloudaudit.googleapis.com\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "inboxflow watch renewal job failures"
  }

  depends_on = [google_project_service.enabled]
}

# Watch expiry: every error line of renew_watch is a mailbox whose watch was
# not renewed ("users.watch failed for ADDRESS") or the run's summary; left
# alone, that mailbox's watch expires 7 days after its last renewal and its
# mail stops arriving.
resource "google_logging_metric" "watch_renewal_errors" {
  project     = var.project_id
  name        = "inboxflow/watch_renewal_errors"
  description = "Error lines of the renew_watch function: mailboxes whose Gmail watch was not renewed and will expire."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${var.service_functions["renew_watch"].function_name}\" AND severity>=ERROR"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "inboxflow watch renewal errors"
  }

  depends_on = [google_project_service.enabled]
}

resource "google_logging_metric" "llm_tokens" {
  project         = var.project_id
  name            = "inboxflow/llm_tokens"
  description     = "LLM tokens (input + output) per step, from the runtime's step line, by node."
  filter          = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=~\"^${local.function_prefix}\" AND jsonPayload.llm_tokens>0"
  value_extractor = "EXTRACT(jsonPayload.llm_tokens)"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "1"
    display_name = "inboxflow LLM tokens per step"

    labels {
      key         = "graph"
      value_type  = "STRING"
      description = "Graph of the trace"
    }

    labels {
      key         = "node"
      value_type  = "STRING"
      description = "Node that called the LLM"
    }
  }

  label_extractors = {
    graph = "EXTRACT(jsonPayload.graph)"
    node  = "EXTRACT(jsonPayload.node)"
  }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 16
      growth_factor      = 2
      scale              = 64
    }
  }

  depends_on = [google_project_service.enabled]
}

# A new log-based metric can take up to 10 minutes before Monitoring accepts
# an alert policy on it; until then creating the policy fails with 404
# "Cannot find metric(s)" (hashicorp/terraform-provider-google#11102, still
# open on 7.x). The policies and the dashboard that read these metrics wait
# here; the wait runs again only when the set of metrics changes.
resource "time_sleep" "log_metrics_ready" {
  create_duration = var.log_metric_wait

  triggers = {
    metrics = join(",", sort([
      google_logging_metric.traces_started.name,
      google_logging_metric.needs_review.name,
      google_logging_metric.function_errors.name,
      google_logging_metric.renew_watch_job_failures.name,
      google_logging_metric.watch_renewal_errors.name,
      google_logging_metric.llm_tokens.name,
      google_logging_metric.stuck_traces.name,
    ]))
  }
}

# --- alert policies ----------------------------------------------------------------

# Anything on a dead-letter subscription is mail nobody handled.
resource "google_monitoring_alert_policy" "dead_letters" {
  project               = var.project_id
  display_name          = "inboxflow: messages on a dead-letter subscription"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "ERROR"

  conditions {
    display_name = "undelivered dead letters > 0"

    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND metric.type = \"pubsub.googleapis.com/subscription/num_undelivered_messages\" AND resource.labels.subscription_id = monitoring.regex.full_match(\"${local.dead_letter_subscription_pattern}\")"
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period   = "300s"
        per_series_aligner = "ALIGN_MAX"
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "A node (or ingest) gave up on a message after max_delivery_attempts, or received input that is not an envelope. The subscription in the incident names the function. Fix the cause, then `inboxflow dlq replay`. ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled]
}

resource "google_monitoring_alert_policy" "backlog" {
  project               = var.project_id
  display_name          = "inboxflow: node subscription backlog is old"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "WARNING"

  conditions {
    display_name = "oldest unacked message older than ${var.backlog_alert_age_seconds}s"

    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND metric.type = \"pubsub.googleapis.com/subscription/oldest_unacked_message_age\" AND resource.labels.subscription_id = monitoring.regex.full_match(\"${local.push_subscription_pattern}\")"
      comparison      = "COMPARISON_GT"
      threshold_value = var.backlog_alert_age_seconds
      duration        = "300s"

      aggregations {
        alignment_period   = "300s"
        per_series_aligner = "ALIGN_MAX"
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "Mail is piling up in front of a node: its function keeps failing (5xx, timeouts) or is at max_instances. Check the function's errors and the 5xx alert. ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled]
}

# Gen2 functions are Cloud Run services: their requests are Cloud Run's.
resource "google_monitoring_alert_policy" "function_5xx" {
  project               = var.project_id
  display_name          = "inboxflow: functions answering 5xx"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "ERROR"

  conditions {
    display_name = "5xx rate above ${var.function_5xx_per_second}/s"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"run.googleapis.com/request_count\" AND metric.labels.response_code_class = \"5xx\" AND resource.labels.service_name = starts_with(\"${local.function_prefix}\")"
      comparison      = "COMPARISON_GT"
      threshold_value = var.function_5xx_per_second
      duration        = "300s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_RATE"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["resource.labels.service_name"]
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "A function keeps failing requests (Pub/Sub retries them, then dead-letters). The service name in the incident is the function. ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled]
}

# A watch lasts 7 days and is renewed daily: one failed run leaves days of
# slack, but every failure must be looked at before the watch expires and
# intake stops silently.
resource "google_monitoring_alert_policy" "watch_renewal" {
  project               = var.project_id
  display_name          = "inboxflow: Gmail watch renewal failed"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "CRITICAL"

  conditions {
    display_name = "renew-watch job attempt failed"

    condition_threshold {
      filter          = "resource.type = \"cloud_scheduler_job\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.renew_watch_job_failures.name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }

      trigger {
        count = 1
      }
    }
  }

  conditions {
    display_name = "a mailbox's users.watch failed"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.watch_renewal_errors.name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "The daily users.watch renewal failed for at least one mailbox (credentials revoked, delegation removed, topic permission). A watch not renewed within 7 days of its last renewal expires and that mailbox's mail stops arriving. Fix the cause, then `gcloud scheduler jobs run ${google_cloud_scheduler_job.renew_watch.name} --location=${var.region}`. ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled, time_sleep.log_metrics_ready]
}

# Deadline and reminder tasks call the approval function's /timeout; an
# attempt that does not succeed means a deadline is not being enforced.
# task_attempt_count's response_code is the attempt's canonical code name in
# lower case ("ok" for a 2xx answer, "unavailable", ...), not an HTTP number.
resource "google_monitoring_alert_policy" "tasks_failures" {
  project               = var.project_id
  display_name          = "inboxflow: approval deadline tasks failing"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "ERROR"

  conditions {
    display_name = "task attempts not OK"

    condition_threshold {
      filter          = "resource.type = \"cloud_tasks_queue\" AND metric.type = \"cloudtasks.googleapis.com/queue/task_attempt_count\" AND resource.labels.queue_id = \"${google_cloud_tasks_queue.approvals.name}\" AND metric.labels.response_code != \"ok\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "Cloud Tasks could not deliver approval deadlines/reminders to the approval function (OIDC verification, 5xx, 503 while Google's certificates cannot be fetched). Tasks retry up to tasks_max_attempts. ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled]
}

resource "google_monitoring_alert_policy" "needs_review" {
  project               = var.project_id
  display_name          = "inboxflow: traces need review"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "WARNING"

  conditions {
    display_name = "a trace ended in needs_review"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.needs_review.name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "300s"
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
    content   = "A node failed (crash, retries exhausted, invalid state) and its trace stopped in needs_review; the email is not answered. Find it with the node label, fix the cause, then `inboxflow retry TRACE`. ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled, time_sleep.log_metrics_ready]
}

# A mailbox whose refresh token Gmail refused (revoked, expired, password
# changed) is marked disconnected once: the ingest or the watch renewal that
# marks it logs one line with outcome mailbox_disconnected (ingest/sync.py,
# ingest/watch.py), and its mail is not read until someone reconnects it.
resource "google_monitoring_alert_policy" "mailbox_disconnected" {
  project               = var.project_id
  display_name          = "inboxflow: a mailbox is disconnected"
  combiner              = "OR"
  notification_channels = local.alert_channels
  severity              = "ERROR"

  conditions {
    display_name = "Gmail refused a mailbox's authorization"

    condition_matched_log {
      filter = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=~\"^${local.function_prefix}\" AND jsonPayload.outcome=\"mailbox_disconnected\""
    }
  }

  # Required by a log-match condition: at most one notification per 5 minutes.
  alert_strategy {
    notification_rate_limit {
      period = "300s"
    }
    auto_close = "604800s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = "Gmail refused a mailbox's authorization (its token was revoked or expired). Its notifications are acknowledged unread until its owner runs `inboxflow mailbox connect ADDRESS --project ${var.project_id}` (the address is in the log line); mail that arrived meanwhile is caught up then. ${local.alert_documentation_footer}"
  }

  depends_on = [google_project_service.enabled]
}

# --- dashboard ---------------------------------------------------------------------

locals {
  dashboard_tiles = [
    {
      title  = "Emails started per minute, by graph"
      filter = "resource.type=\"cloud_run_revision\" AND metric.type=\"logging.googleapis.com/user/${google_logging_metric.traces_started.name}\""
      aggregation = {
        alignmentPeriod    = "60s"
        perSeriesAligner   = "ALIGN_DELTA"
        crossSeriesReducer = "REDUCE_SUM"
        groupByFields      = ["metric.labels.graph"]
      }
    },
    {
      title  = "Hop latency: push delivery to each node, p95 (ms)"
      filter = "resource.type=\"pubsub_subscription\" AND metric.type=\"pubsub.googleapis.com/subscription/push_request_latencies\" AND resource.labels.subscription_id=monitoring.regex.full_match(\"${local.push_subscription_pattern}\")"
      aggregation = {
        alignmentPeriod    = "300s"
        perSeriesAligner   = "ALIGN_DELTA"
        crossSeriesReducer = "REDUCE_PERCENTILE_95"
        groupByFields      = ["resource.labels.subscription_id"]
      }
    },
    {
      title  = "Hop wait: oldest unacked message per node (s)"
      filter = "resource.type=\"pubsub_subscription\" AND metric.type=\"pubsub.googleapis.com/subscription/oldest_unacked_message_age\" AND resource.labels.subscription_id=monitoring.regex.full_match(\"${local.push_subscription_pattern}\")"
      aggregation = {
        alignmentPeriod  = "60s"
        perSeriesAligner = "ALIGN_MAX"
      }
    },
    {
      # Every waiting approval has its deadline task in this queue (reminders add one each).
      title  = "Waiting approvals (deadline tasks queued)"
      filter = "resource.type=\"cloud_tasks_queue\" AND metric.type=\"cloudtasks.googleapis.com/queue/depth\" AND resource.labels.queue_id=\"${google_cloud_tasks_queue.approvals.name}\""
      aggregation = {
        alignmentPeriod  = "60s"
        perSeriesAligner = "ALIGN_MAX"
      }
    },
    {
      title  = "LLM tokens per step, p95, by node"
      filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.llm_tokens.name}\""
      aggregation = {
        alignmentPeriod    = "300s"
        perSeriesAligner   = "ALIGN_DELTA"
        crossSeriesReducer = "REDUCE_PERCENTILE_95"
        groupByFields      = ["metric.labels.graph", "metric.labels.node"]
      }
    },
    {
      title  = "Traces in needs_review, by node"
      filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.needs_review.name}\""
      aggregation = {
        alignmentPeriod    = "300s"
        perSeriesAligner   = "ALIGN_SUM"
        crossSeriesReducer = "REDUCE_SUM"
        groupByFields      = ["metric.labels.graph", "metric.labels.node"]
      }
    },
    {
      title  = "Function 5xx per second, by function"
      filter = "resource.type=\"cloud_run_revision\" AND metric.type=\"run.googleapis.com/request_count\" AND metric.labels.response_code_class=\"5xx\" AND resource.labels.service_name=starts_with(\"${local.function_prefix}\")"
      aggregation = {
        alignmentPeriod    = "300s"
        perSeriesAligner   = "ALIGN_RATE"
        crossSeriesReducer = "REDUCE_SUM"
        groupByFields      = ["resource.labels.service_name"]
      }
    },
    {
      title  = "Dead letters waiting"
      filter = "resource.type=\"pubsub_subscription\" AND metric.type=\"pubsub.googleapis.com/subscription/num_undelivered_messages\" AND resource.labels.subscription_id=monitoring.regex.full_match(\"${local.dead_letter_subscription_pattern}\")"
      aggregation = {
        alignmentPeriod  = "300s"
        perSeriesAligner = "ALIGN_MAX"
      }
    },
  ]
}

resource "google_monitoring_dashboard" "operations" {
  project = var.project_id
  dashboard_json = jsonencode({
    displayName = "inboxflow ${var.environment}"
    mosaicLayout = {
      columns = 12
      tiles = [
        for index, tile in local.dashboard_tiles : {
          xPos   = (index % 2) * 6
          yPos   = floor(index / 2) * 4
          width  = 6
          height = 4
          widget = {
            title = tile.title
            xyChart = {
              dataSets = [{
                plotType = "LINE"
                timeSeriesQuery = {
                  timeSeriesFilter = {
                    filter      = tile.filter
                    aggregation = tile.aggregation
                  }
                }
              }]
            }
          }
        }
      ]
    }
  })

  depends_on = [google_project_service.enabled, time_sleep.log_metrics_ready]
}
