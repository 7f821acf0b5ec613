variable "project_id" {
  type        = string
  description = "Project that hosts the function."
}

variable "region" {
  type        = string
  description = "Region of the function."
}

variable "function_name" {
  type        = string
  description = "Cloud Function (and Cloud Run service) name: 4-63 characters of [a-z0-9-]."
}

variable "description" {
  type        = string
  description = "Human-readable description of the function."
  default     = ""
}

variable "service_account_id" {
  type        = string
  description = "account_id of the service account created for this function (6-30 characters)."
}

variable "project_roles" {
  type        = set(string)
  description = "Project-level roles for the function's own service account; keep to the allowlist in tests/infra."
  default     = []
}

variable "runtime" {
  type        = string
  description = "Cloud Functions runtime, e.g. python311."
}

variable "entry_point" {
  type        = string
  description = "Function in main.py to run (run_node for graph nodes, ingest for Gmail)."
}

variable "source_bucket" {
  type        = string
  description = "Bucket holding the source archive."
}

variable "source_object" {
  type        = string
  description = "Object name of the source archive; named by its hash so a code change redeploys."
}

variable "docker_repository" {
  type        = string
  description = "Artifact Registry repository the build pushes the function's image to (projects/P/locations/L/repositories/R), the stack's repository with its cleanup policy."
}

variable "build_service_account" {
  type        = string
  description = "Full resource id (projects/P/serviceAccounts/EMAIL) of the Cloud Build identity."
}

variable "memory_mb" {
  type        = number
  description = "Memory per instance, in MiB."
  default     = 512
}

variable "timeout_s" {
  type        = number
  description = "Request timeout in seconds; the push ack deadline follows it (capped at 600)."
  default     = 60
}

variable "max_instances" {
  type        = number
  description = "Upper bound on instances (back-pressure for the LLM and Gmail quotas)."
  default     = 20
}

variable "min_instances" {
  type        = number
  description = "Warm instances kept running (0 scales to zero)."
  default     = 0
}

variable "environment_variables" {
  type        = map(string)
  description = "Plain environment variables (INBOXFLOW_NODE, adapters, queue, ...)."
  default     = {}
}

variable "secret_environment_variables" {
  type        = map(string)
  description = "Environment variable name => Secret Manager secret id; the function's identity is granted accessor on each."
  default     = {}
}

variable "labels" {
  type        = map(string)
  description = "Labels for the function and subscription."
  default     = {}
}

variable "topic_id" {
  type        = string
  description = "Topic the function is subscribed to (projects/P/topics/T)."
}

variable "subscription_name" {
  type        = string
  description = "Name of the push subscription delivering topic_id to the function."
}

variable "dead_letter_topic_id" {
  type        = string
  description = "Dead-letter topic for messages that exhaust max_delivery_attempts (projects/P/topics/T)."
}

variable "max_delivery_attempts" {
  type        = number
  description = "Deliveries before a message is dead-lettered (5-100)."
  default     = 10
}

variable "minimum_backoff" {
  type        = string
  description = "Retry policy: first redelivery delay."
  default     = "10s"
}

variable "maximum_backoff" {
  type        = string
  description = "Retry policy: longest redelivery delay."
  default     = "600s"
}

variable "push_service_account_email" {
  type        = string
  description = "Identity whose OIDC token Pub/Sub attaches to each push; granted run.invoker on this function's service."
}

variable "pubsub_service_agent" {
  type        = string
  description = "Email of the project's Pub/Sub service agent (service-NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com)."
}

variable "iam_propagation_wait" {
  type        = string
  description = "Wait between the function's grants and its first build (passed to modules/http_function)."
  default     = "120s"
}
