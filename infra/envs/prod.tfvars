# Example: production. Firestore location cannot change after creation.
# terraform plan -var-file=envs/prod.tfvars
project_id                    = "inboxflow-prod-123456"
region                        = "europe-west1"
environment                   = "prod"
alert_email                   = "inboxflow-oncall@example.com" # every alert mails it (required)
firestore_location            = "eur3"
firestore_deletion_protection = true
max_delivery_attempts         = 10
renew_watch_schedule          = "17 5 * * *"
scheduler_time_zone           = "Europe/Paris"
labels = {
  owner       = "inboxflow-team"
  cost-center = "email-agents"
}
# Plain settings for every function (never secrets).
function_environment = {
  INBOXFLOW_REVIEWERS = "support-lead@example.com"
}
