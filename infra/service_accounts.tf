# Each function's own identity is created by its module (modules/http_function).
# Here: the identities that call functions (Pub/Sub push, Cloud Tasks, Cloud
# Scheduler) and the one that builds them.

resource "google_service_account" "pubsub_push" {
  project      = var.project_id
  account_id   = "ibx-pubsub-push"
  display_name = "inboxflow Pub/Sub push identity"
  description  = "Signs the OIDC tokens of push subscriptions; may only invoke the pushed functions."

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "tasks_invoker" {
  project      = var.project_id
  account_id   = "ibx-tasks-invoker"
  display_name = "inboxflow Cloud Tasks identity"
  description  = "Signs the OIDC tokens of approval deadline tasks (INBOXFLOW_TASKS_INVOKER); the approval function accepts only its tokens on /timeout."

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "scheduler_invoker" {
  project      = var.project_id
  account_id   = "ibx-scheduler-invoker"
  display_name = "inboxflow Cloud Scheduler identity"
  description  = "Signs the OIDC token of the daily renew-watch job."

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "build" {
  project      = var.project_id
  account_id   = "ibx-function-build"
  display_name = "inboxflow function build"
  description  = "Cloud Build identity that turns the source archive into function images."

  depends_on = [google_project_service.enabled]
}

# Domain-wide delegation without a key (gmail_keyless_delegation): a Workspace
# admin authorizes this account's client id (output gmail_delegation_client_id)
# for the Gmail and Calendar scopes; no key is ever created for it.
locals {
  gmail_delegate_id    = "ibx-gmail-delegate"
  gmail_delegate_email = "${local.gmail_delegate_id}@${var.project_id}.iam.gserviceaccount.com"
}

resource "google_service_account" "gmail_delegate" {
  count = var.gmail_keyless_delegation ? 1 : 0

  project      = var.project_id
  account_id   = local.gmail_delegate_id
  display_name = "inboxflow Gmail delegate"
  description  = "Domain-wide delegation for the connected mailboxes; keyless: the Gmail functions sign its JWTs through the IAM Credentials API."

  depends_on = [google_project_service.enabled]
}
