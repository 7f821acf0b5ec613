# Example: a throwaway development project.
# terraform plan -var-file=envs/dev.tfvars
project_id  = "inboxflow-dev-123456"
region      = "us-central1"
environment = "dev"
alert_email = "inboxflow-dev-alerts@example.com" # every alert mails it (required)
# firestore_location: derived from region (us-* -> nam5, europe-* -> eur3) unless set here.
firestore_deletion_protection = false
max_delivery_attempts         = 5
labels = {
  owner = "inboxflow-team"
}
