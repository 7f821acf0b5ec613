# Example: staging, shaped like production in its own project.
# terraform plan -var-file=envs/staging.tfvars
project_id                    = "inboxflow-staging-123456"
region                        = "europe-west1"
environment                   = "staging"
alert_email                   = "inboxflow-staging-alerts@example.com" # every alert mails it (required)
firestore_location            = "eur3"
firestore_deletion_protection = true
max_delivery_attempts         = 10
labels = {
  owner = "inboxflow-team"
}
