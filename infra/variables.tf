# --- environment (envs/<environment>.tfvars) ------------------------------------

variable "project_id" {
  type        = string
  description = "Google Cloud project that hosts this environment."
}

variable "region" {
  type        = string
  description = "Region for functions, Cloud Tasks and Cloud Scheduler."
  default     = "us-central1"
}

variable "environment" {
  type        = string
  description = "Environment name (dev, staging or prod); used in labels and the state prefix."

  validation {
    condition     = contains(["dev", "staging", "prod"], var.environment)
    error_message = "environment must be one of dev, staging, prod."
  }
}

variable "labels" {
  type        = map(string)
  description = "Extra labels on every resource that supports them."
  default     = {}
}

variable "firestore_location" {
  type        = string
  description = "Firestore location (a multi-region such as nam5/eur3, or a region). Empty: derived from region (us-*/northamerica-* -> nam5, europe-* -> eur3, else the region itself). Cannot change after creation."
  default     = ""
}

variable "firestore_deletion_protection" {
  type        = bool
  description = "Refuse to delete the Firestore database (keep true outside throwaway dev projects)."
  default     = true
}

variable "source_archive" {
  type        = string
  description = "Path of the function source zip built by `python -m inboxflow.infra_export archive`."
  default     = "../dist/source.zip"
}

variable "secret_ids" {
  type        = list(string)
  description = "Secret Manager secrets the functions read as environment variables: GMAIL_CREDENTIALS (as INBOXFLOW_GMAIL_CREDENTIALS), and any other (QUOTING_API_KEY); GEMINI_API_KEY is added when llm = \"gemini_api\" (list it here to keep its secret when you switch away). Values are added out of band."
  default     = ["GMAIL_CREDENTIALS"]

  validation {
    condition     = contains(var.secret_ids, "GMAIL_CREDENTIALS")
    error_message = "secret_ids must include GMAIL_CREDENTIALS."
  }
}

variable "llm" {
  type        = string
  description = "How the nodes that call the LLM reach a model: gemini_api (the Gemini API with the GEMINI_API_KEY secret), vertex (Vertex AI as each function's own identity: no key; roles/aiplatform.user, the aiplatform API and vertex_location), or offline (the deterministic model, no key: a dry run)."
  default     = "gemini_api"

  validation {
    condition     = contains(["gemini_api", "vertex", "offline"], var.llm)
    error_message = "llm must be gemini_api, vertex or offline."
  }
}

variable "vertex_location" {
  type        = string
  description = "With llm = \"vertex\": GOOGLE_CLOUD_LOCATION of the Gemini calls, global (Google routes each request to any region that serves the model) or a region such as europe-west1 (the requests stay there: data residency)."
  default     = "global"

  validation {
    condition     = var.vertex_location == "global" || can(regex("^[a-z]+-[a-z]+[0-9]+$", var.vertex_location))
    error_message = "vertex_location must be global or a region such as us-central1."
  }
}

variable "approval_base_url" {
  type        = string
  description = "Base URL reviewers' links and the deadline tasks use (INBOXFLOW_APPROVAL_URL, INBOXFLOW_TASKS_AUDIENCE), e.g. https://approvals.example.com behind your load balancer. Empty: the function's https://REGION-PROJECT.cloudfunctions.net/NAME URL."
  default     = ""

  validation {
    condition     = var.approval_base_url == "" || can(regex("^https://[^/?#\\s]+(/[^?#\\s]*)?$", var.approval_base_url))
    error_message = "approval_base_url must be empty or an https:// URL without query or fragment."
  }
}

variable "approval_access" {
  type        = string
  description = "How reviewers reach the approval function: all_users (roles/run.invoker for allUsers), invoker_check_disabled (no IAM grant; the build turns off Cloud Run's invoker IAM check, for domain-restricted sharing), or none (nothing public: put your own load balancer with IAP in front and set approval_base_url)."
  default     = "all_users"

  validation {
    condition     = contains(["all_users", "invoker_check_disabled", "none"], var.approval_access)
    error_message = "approval_access must be all_users, invoker_check_disabled or none."
  }
}

variable "gmail_push_grant" {
  type        = bool
  description = "Grant gmail-api-push@system.gserviceaccount.com publish on the Gmail topic. Under domain-restricted sharing the grant fails until the organization allows that principal (docs/deploy.md); false skips it, and no mail arrives until it exists."
  default     = true
}

variable "gmail_keyless_delegation" {
  type        = bool
  description = "Create the ibx-gmail-delegate service account for domain-wide delegation without a key: the Gmail functions get Token Creator on it and sign its JWTs through the IAM Credentials API (GMAIL_CREDENTIALS holds {\"type\": \"keyless_delegation\", \"service_account\": EMAIL})."
  default     = false
}

variable "iam_propagation_wait" {
  type        = string
  description = "Wait between a function identity's grants (secrets, project roles, the build account's roles) and the function's first build; IAM changes typically take 2 minutes, sometimes 7 or more. A duration such as \"120s\"."
  default     = "120s"
}

variable "log_metric_wait" {
  type        = string
  description = "Wait between creating the log-based metrics and the alert policies that read them; a new metric can take up to 10 minutes before Monitoring accepts a policy on it (404 \"Cannot find metric(s)\")."
  default     = "10m"
}

variable "notify_from" {
  type        = string
  description = "INBOXFLOW_NOTIFY_FROM: a dedicated address reviewer emails are sent from, so review links stay in its Sent folder rather than in the automated mailbox's (empty: the mailbox under review)."
  default     = ""

  validation {
    condition     = var.notify_from == "" || can(regex("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", var.notify_from))
    error_message = "notify_from must be empty or one email address."
  }
}

variable "quoting_url" {
  type        = string
  description = "INBOXFLOW_QUOTING_URL: base URL of the PPA quoting API the planner calls (empty: the embedded quoting engine). Its API key is the secret QUOTING_API_KEY: add it to secret_ids and a version out of band."
  default     = ""

  validation {
    condition     = var.quoting_url == "" || can(regex("^https://", var.quoting_url))
    error_message = "quoting_url must be empty or an https:// URL."
  }
}

variable "quoting_nodes" {
  type        = list(string)
  description = "Nodes (graph.node) that call the quoting API: only they get INBOXFLOW_QUOTING_URL and the QUOTING_API_KEY secret."
  default     = ["planner.tools"]
}

variable "function_environment" {
  type        = map(string)
  description = "Extra plain environment variables for every function (e.g. INBOXFLOW_GEMINI_MODEL, INBOXFLOW_REVIEWERS); never secrets."
  default     = {}
}

variable "max_delivery_attempts" {
  type        = number
  description = "Pub/Sub deliveries of one message before it goes to the dead-letter topic (5-100)."
  default     = 10

  validation {
    condition     = var.max_delivery_attempts >= 5 && var.max_delivery_attempts <= 100
    error_message = "max_delivery_attempts must be between 5 and 100."
  }
}

variable "push_minimum_backoff" {
  type        = string
  description = "Pub/Sub retry policy: first redelivery delay (duration, e.g. \"10s\")."
  default     = "10s"
}

variable "push_maximum_backoff" {
  type        = string
  description = "Pub/Sub retry policy: longest redelivery delay (at most \"600s\")."
  default     = "600s"
}

variable "dead_letter_retention" {
  type        = string
  description = "How long dead-lettered messages are kept on the dead-letter subscriptions."
  default     = "604800s"
}

variable "renew_watch_schedule" {
  type        = string
  description = "Cron schedule of the daily Gmail watch renewal (a watch lasts 7 days)."
  default     = "17 5 * * *"
}

variable "digest_schedule" {
  type        = string
  description = "Cron schedule (UTC) of the reviewer digest sweep: the latest a held-back digest or a daily summary waits after it is due."
  default     = "*/15 * * * *"
}

variable "scheduler_time_zone" {
  type        = string
  description = "Time zone of the renew-watch schedule."
  default     = "Etc/UTC"
}

variable "tasks_max_attempts" {
  type        = number
  description = "Cloud Tasks attempts for an approval deadline or reminder task (-1 for unlimited)."
  default     = 20
}

variable "tasks_max_retry_duration" {
  type        = string
  description = "Cloud Tasks: stop retrying a task after this long."
  default     = "86400s"
}

variable "tasks_min_backoff" {
  type        = string
  description = "Cloud Tasks: first retry delay."
  default     = "10s"
}

variable "tasks_max_backoff" {
  type        = string
  description = "Cloud Tasks: longest retry delay."
  default     = "3600s"
}

variable "tasks_max_dispatches_per_second" {
  type        = number
  description = "Cloud Tasks rate limit on the approvals queue."
  default     = 10
}

# --- generated: graph.auto.tfvars.json (`inboxflow infra export`) -------------

variable "runtime" {
  type        = string
  description = "Cloud Functions runtime of every function (generated)."
  default     = "python311"
}

variable "node_functions" {
  type = map(object({
    graph              = string
    node               = string
    function_name      = string
    entry_point        = string
    service_account_id = string
    topic              = string
    dead_letter_topic  = string
    subscription       = string
    publishes_to       = list(string)
    is_entry           = bool
    pauses             = bool
    uses_llm           = bool
    uses_gmail         = bool
    notifies           = optional(bool, false)
    memory_mb          = number
    timeout_s          = number
    max_instances      = number
    min_instances      = number
  }))
  description = "One entry per graph node, keyed by INBOXFLOW_NODE (graph.node), with what it may do (pauses, uses_llm, uses_gmail, notifies); generated from inboxflow.graphs."
}

variable "service_functions" {
  type = map(object({
    function_name      = string
    entry_point        = string
    service_account_id = string
    trigger            = string
    public             = bool
    topic              = optional(string)
    dead_letter_topic  = optional(string)
    subscription       = optional(string)
    memory_mb          = number
    timeout_s          = number
    max_instances      = number
    min_instances      = number
  }))
  description = "The approve, ingest and renew_watch functions (generated)."

  validation {
    condition     = alltrue([for name in ["approve", "ingest", "renew_watch"] : contains(keys(var.service_functions), name)])
    error_message = "service_functions must define approve, ingest and renew_watch."
  }
}

variable "entry_topics" {
  type        = list(string)
  description = "Topics of the graphs' entry nodes: the only node topics the ingest function may publish to (generated)."
}

variable "resume_topics" {
  type        = list(string)
  description = "Topics of the nodes a pause resumes (routes of pausing nodes): the only node topics the approval function may publish to (generated)."
}

variable "shared_dead_letter_topic" {
  type        = string
  description = "Topic for messages no node can be named for (the runtime's bus.dead_letter without INBOXFLOW_NODE) (generated)."
  default     = "inboxflow-dead-letter"
}

variable "gmail_topic" {
  type        = string
  description = "Topic Gmail users.watch publishes mailbox changes to (generated)."
  default     = "inboxflow-gmail"
}

variable "tasks_queue" {
  type        = string
  description = "Cloud Tasks queue for approval deadlines and reminders (generated)."
  default     = "inboxflow-approvals"
}

variable "firestore_ttl_collections" {
  type        = list(string)
  description = "Collection groups with a TTL policy on expire_at (generated)."
}

variable "firestore_composite_indexes" {
  type = list(object({
    collection = string
    fields = list(object({
      field_path   = string
      order        = optional(string)
      array_config = optional(string)
    }))
  }))
  description = "Composite indexes the code's Firestore queries need; each field has order (ASCENDING/DESCENDING) or array_config (CONTAINS) (generated)."
}

variable "firestore_vector_indexes" {
  type = list(object({
    collection    = string
    prefix_fields = list(string)
    field_path    = string
    dimension     = number
  }))
  description = "Flat vector indexes for find_nearest (distance measure chosen per query: cosine), with the equality fields searches pre-filter on (generated)."
}

variable "firestore_index_exemptions" {
  type = list(object({
    collection = string
    field      = string
  }))
  description = "Fields exempt from single-field indexing: large, never filtered on (generated)."
}
