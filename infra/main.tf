# Shared values. Everything that depends on the graphs comes from
# graph.auto.tfvars.json, written by `inboxflow infra export`.

# Needs the Resource Manager API before the first plan (infra/bootstrap).
data "google_project" "this" {
  project_id = var.project_id
}

locals {
  # The Pub/Sub service agent. Google creates it lazily, and a grant to an
  # agent that does not exist yet fails: infra/bootstrap creates it first
  # (google_project_service_identity), so here its address is enough, derived
  # from the project number as terraform-google-pubsub does.
  pubsub_service_agent = "service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"

  # Reviewers' links and the deadline tasks' audience. Gen2 functions also
  # answer on the deterministic cloudfunctions.net URL, so every function (the
  # approval function included) can know it without a dependency cycle; a
  # custom domain (a load balancer in front of the function) replaces it.
  default_approval_url = "https://${var.region}-${var.project_id}.cloudfunctions.net/${var.service_functions["approve"].function_name}"
  approval_url         = var.approval_base_url == "" ? local.default_approval_url : trimsuffix(var.approval_base_url, "/")

  # Where the deadline tasks and the digest job call the approval function,
  # and the audience of their OIDC token. With approval_access = "none",
  # Cloud Run's invoker check admits them (iam.tf, approve_tasks_invoker),
  # and it accepts a token only for the service's own run.app URL, not a load
  # balancer's: they call that URL, in its deterministic form
  # https://SERVICE-PROJECT_NUMBER.REGION.run.app (known before the function
  # exists, so no cycle; cloud.google.com/run/docs/triggering/https-request).
  # Otherwise they call approval_url, as reviewers do.
  approve_run_url = "https://${var.service_functions["approve"].function_name}-${data.google_project.this.number}.${var.region}.run.app"
  tasks_url       = var.approval_access == "none" ? local.approve_run_url : local.approval_url

  # Firestore next to the functions unless firestore_location says otherwise:
  # the multi-region of the functions' continent (nam5, eur3), else their region.
  region_prefix = split("-", var.region)[0]
  firestore_location = var.firestore_location != "" ? var.firestore_location : lookup(
    { us = "nam5", northamerica = "nam5", europe = "eur3" }, local.region_prefix, var.region
  )
  firestore_prefix = split("-", local.firestore_location)[0]
  firestore_near_functions = (
    local.firestore_prefix == local.region_prefix
    || (startswith(local.firestore_location, "nam") && contains(["us", "northamerica"], local.region_prefix))
    || (startswith(local.firestore_location, "eur") && local.region_prefix == "europe")
  )

  # Environment every function reads (see docs/architecture.md §10).
  base_environment = merge(var.function_environment, {
    GOOGLE_CLOUD_PROJECT = var.project_id
    INBOXFLOW_STORE      = "firestore"
    INBOXFLOW_BUS        = "pubsub"
    INBOXFLOW_TASKS      = "cloudtasks"
    INBOXFLOW_REGION     = var.region
  })

  # Only for functions that schedule deadline tasks and mail review links:
  # pausing nodes and the approval function. Tasks carry an OIDC token of
  # the tasks identity for the audience INBOXFLOW_TASKS_AUDIENCE; the public
  # approval function verifies both itself on POST /timeout.
  tasks_environment = {
    INBOXFLOW_APPROVAL_URL   = local.approval_url
    INBOXFLOW_TASKS_QUEUE    = google_cloud_tasks_queue.approvals.name
    INBOXFLOW_TASKS_INVOKER  = google_service_account.tasks_invoker.email
    INBOXFLOW_TASKS_SA       = google_service_account.tasks_invoker.email # read by adapters/cloud_tasks.py
    INBOXFLOW_TASKS_URL      = local.tasks_url                            # where tasks call /timeout (approvals/settings.py)
    INBOXFLOW_TASKS_AUDIENCE = local.tasks_url
    INBOXFLOW_NOTIFY_FROM    = var.notify_from # empty: reviewers are mailed from the mailbox under review
  }

  # Environment variable => Secret Manager secret. Values never pass
  # through Terraform; each function's identity may read only its own.
  # The Gemini key only with llm = "gemini_api" (vertex and offline need none).
  gemini_secret = {
    for id in ["GEMINI_API_KEY"] : id => google_secret_manager_secret.runtime[id].secret_id if var.llm == "gemini_api"
  }
  gmail_secret = { INBOXFLOW_GMAIL_CREDENTIALS = google_secret_manager_secret.runtime["GMAIL_CREDENTIALS"].secret_id }
  quoting_secret = contains(var.secret_ids, "QUOTING_API_KEY") ? {
    INBOXFLOW_QUOTING_API_KEY = google_secret_manager_secret.runtime["QUOTING_API_KEY"].secret_id
  } : {}

  # Per node, from the export: the Gemini key only for nodes that call the
  # LLM or the embedder, Gmail credentials only for nodes that talk to
  # Gmail/Calendar (pausing nodes mail their reviewers).
  node_secrets = {
    for key, node in var.node_functions : key => merge(
      { for name, secret in local.gemini_secret : name => secret if node.uses_llm },
      { for name, secret in local.gmail_secret : name => secret if node.uses_gmail },
      { for name, secret in local.quoting_secret : name => secret if contains(var.quoting_nodes, key) },
      { for name, secret in local.ses_secret : name => secret if node.notifies }, # ses.tf
    )
  }
  # The quoting API's URL, for the nodes that call it (the planner's tools).
  node_quoting_environment = {
    for key, node in var.node_functions : key => {
      for name, value in { INBOXFLOW_QUOTING_URL = var.quoting_url } : name => value
      if value != "" && contains(var.quoting_nodes, key)
    }
  }
  node_task_environment = {
    for key, node in var.node_functions : key => {
      for name, value in local.tasks_environment : name => value if node.pauses
    }
  }

  # Nodes that call the LLM say which model family they must use, so a
  # missing key stops them at start instead of silently answering with the
  # offline model (llm_selection.gemini_settings raises for "gemini").
  # vertex: google-genai's Vertex mode (adapters/gemini_llm.py,
  # GeminiSettings.from_env): GOOGLE_GENAI_USE_VERTEXAI with
  # GOOGLE_CLOUD_PROJECT (base_environment) and GOOGLE_CLOUD_LOCATION,
  # credentials from the function's own identity (roles/aiplatform.user, iam.tf).
  llm_environment = {
    gemini_api = { INBOXFLOW_LLM = "gemini" }
    vertex = {
      INBOXFLOW_LLM             = "gemini"
      GOOGLE_GENAI_USE_VERTEXAI = "true"
      GOOGLE_CLOUD_LOCATION     = var.vertex_location
    }
    offline = { INBOXFLOW_LLM = "offline" }
  }[var.llm]
  node_llm_environment = {
    for key, node in var.node_functions : key => {
      for name, value in local.llm_environment : name => value if node.uses_llm
    }
  }

  # With llm = "vertex", the identities of the nodes that call the LLM call
  # Vertex AI (iam.tf, vertex_users).
  vertex_users = {
    for key, node in var.node_functions : key => module.node[key].service_account_member
    if var.llm == "vertex" && node.uses_llm
  }

  # Nodes that may return a Pause: they create Cloud Tasks as the tasks identity.
  pausing_nodes = { for key, node in var.node_functions : key => node if node.pauses }

  # Every Pub/Sub-pushed function: the graph nodes plus the Gmail ingest.
  pushed_functions = merge(
    { for key, node in var.node_functions : key => {
      topic             = node.topic
      dead_letter_topic = node.dead_letter_topic
    } },
    { ingest = {
      topic             = var.service_functions["ingest"].topic
      dead_letter_topic = var.service_functions["ingest"].dead_letter_topic
    } },
  )

  # (publisher key, topic name) pairs: each node may publish only to the
  # nodes it routes to.
  node_publish_grants = merge([
    for key, node in var.node_functions : {
      for topic in node.publishes_to : "${key}>${topic}" => { function = key, topic = topic }
    }
  ]...)
  node_topic_names = { for key, node in var.node_functions : node.topic => key }

  # Functions that act as a mailbox (they mount the Gmail secret), by
  # function: each reads the mailboxes' own tokens (iam.tf,
  # mailbox_token_readers) and, with keyless delegation, may sign as the
  # delegate (iam.tf).
  gmail_functions = merge(
    { for key, node in var.node_functions : key => module.node[key].service_account_member if node.uses_gmail },
    {
      ingest      = module.ingest.service_account_member
      approve     = module.approve.service_account_member
      renew_watch = module.renew_watch.service_account_member
    },
  )
  gmail_delegation_signers = var.gmail_keyless_delegation ? local.gmail_functions : {}

  # Each mailbox's own OAuth token (`inboxflow mailbox connect ADDRESS
  # --project`) is a Secret Manager secret of its own, inboxflow-mailbox-*
  # (adapters/mailbox_tokens.py, token_name); the functions acting as a
  # mailbox read it before the shared GMAIL_CREDENTIALS. The locations are
  # those of the secrets connect creates (empty: automatic replication).
  mailbox_token_prefix = "inboxflow-mailbox-"
  mailbox_token_environment = {
    INBOXFLOW_MAILBOX_TOKENS   = "secret-manager"
    INBOXFLOW_SECRET_LOCATIONS = join(",", var.secret_replication_locations)
  }
  node_mailbox_token_environment = {
    for key, node in var.node_functions : key => {
      for name, value in local.mailbox_token_environment : name => value if node.uses_gmail
    }
  }
}
