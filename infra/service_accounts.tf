# One identity per function (node and ingest identities are created by
# modules/node_function), plus the identities that call functions:
# Pub/Sub push, Cloud Tasks, Cloud Scheduler, and the function build.

resource "google_service_account" "approve" {
  project      = var.project_id
  account_id   = var.service_functions["approve"].service_account_id
  display_name = "inboxflow approve function"
  description  = "Runs the approval HTTP function: reads/decides approvals, resumes traces."
}

resource "google_service_account" "renew_watch" {
  project      = var.project_id
  account_id   = var.service_functions["renew_watch"].service_account_id
  display_name = "inboxflow renew-watch function"
  description  = "Runs the daily Gmail users.watch renewal."
}

resource "google_service_account" "pubsub_push" {
  project      = var.project_id
  account_id   = "ibx-pubsub-push"
  display_name = "inboxflow Pub/Sub push identity"
  description  = "Signs the OIDC tokens of push subscriptions; may only invoke the pushed functions."
}

resource "google_service_account" "tasks_invoker" {
  project      = var.project_id
  account_id   = "ibx-tasks-invoker"
  display_name = "inboxflow Cloud Tasks identity"
  description  = "Signs the OIDC tokens of approval deadline/reminder tasks (INBOXFLOW_TASKS_SA)."
}

resource "google_service_account" "scheduler_invoker" {
  project      = var.project_id
  account_id   = "ibx-scheduler-invoker"
  display_name = "inboxflow Cloud Scheduler identity"
  description  = "Signs the OIDC token of the daily renew-watch job."
}

resource "google_service_account" "build" {
  project      = var.project_id
  account_id   = "ibx-function-build"
  display_name = "inboxflow function build"
  description  = "Cloud Build identity that turns the source archive into function images."
}
