"""Word lists for the benchmark corpus: software/ops vocabulary and name parts.

Entities (services, hosts, people) are composed from these parts by genmem, so the corpus has
a few thousand distinct words with a realistic long tail.
"""

from __future__ import annotations

PROJECTS = (
    "tallybird", "fieldnotes", "driftwood-docs", "harbor-api", "quillpad", "larkspur-web",
    "ledgerline", "pinecrest-mobile", "orbitdesk", "saltmarsh-etl", "copperleaf", "wayfarer-app",
    "nightjar-infra", "bramble-cms", "kestrel-billing", "mosaic-search", "tidewater-ml",
    "juniper-auth", "parcelpost", "emberline-analytics",
)

TECH = """
Postgres MySQL SQLite Redis Memcached Kafka RabbitMQ NATS SQS SNS Kinesis S3 CloudFront
Route53 Lambda ECS EKS Fargate EC2 RDS Aurora DynamoDB ElastiCache IAM KMS CloudWatch
Terraform Pulumi Ansible Packer Vault Consul Nomad Kubernetes Helm Kustomize ArgoCD Flux
Docker Podman containerd Nginx Caddy Traefik HAProxy Envoy Istio Linkerd Prometheus Grafana
Loki Tempo Jaeger OpenTelemetry Sentry Datadog PagerDuty Opsgenie BetterStack Honeycomb
Elasticsearch OpenSearch Meilisearch Typesense ClickHouse BigQuery Snowflake dbt Airflow
Dagster Prefect Spark Flink Pandas Polars DuckDB Parquet Avro Protobuf gRPC GraphQL REST
OpenAPI Django Flask FastAPI Celery Rails Sidekiq Kamal Puma Phoenix Elixir Go Rust Python
TypeScript JavaScript Node Deno Bun React Next.js Vue Nuxt Svelte SvelteKit Astro Remix
Tailwind Vite Webpack esbuild Jest Vitest Playwright Cypress pytest Minitest RSpec Hypothesis
GitHub Actions GitLab CI CircleCI Buildkite Jenkins Dependabot Renovate pre-commit ruff mypy
Black ESLint Prettier Stripe Paddle Twilio SendGrid Postmark SES Mailgun Auth0 Keycloak Okta
Cloudflare Fastly Netlify Vercel Fly.io Render Heroku Hetzner DigitalOcean Linode GCP Azure
Cloud Run Firebase Supabase PlanetScale Neon Turso restic Borg WireGuard Tailscale systemd
cron Bash zsh tmux Neovim Expo Swift Kotlin Gradle Xcode Fastlane TestFlight Sentry
""".split()

SERVICE_HEADS = """
billing ledger payments payouts invoices auth identity session search catalog inventory orders
checkout cart shipping notify mailer webhooks events audit reports metrics ingest export import
sync scheduler jobs media thumbnails uploads storage gateway edge proxy router profile accounts
pricing quotes tax fraud risk kyc onboarding feeds timeline chat presence geo maps routing
dispatch tracking loyalty coupons referrals analytics warehouse etl embeddings ranker
recommender labels translations docs status
""".split()

SERVICE_TAILS = "api worker gateway svc sync cron service consumer indexer bridge daemon web".split()

HOST_ROLES = "db pg redis kafka web app api worker build ci bastion vpn lb cache es search mon log backup".split()
REGIONS = "fra1 ams3 nyc1 sfo2 lon1 sgp1 syd1 gru1 hel1 nbg1 iad1 pdx1".split()

FIRST_NAMES = """
ana bruno caio julia rafa noor teodor priya marek sofia lucas ines tomas lea oskar mei yusuf
amara kenji zofia diego hana omar elif ravi greta pablo nadia ivan chloe felix laila mateo
sara jonas aiko emil rosa arjun lina hugo maya kofi ines vera leon dara nils aurora milan
tariq petra bjorn camila samir irene dmitri yara erik nina paulo ruth otto selin wen jamal
freya abel lucia gustavo keiko""".split()

NOUNS = """
deploy release rollback migration schema index query cache queue topic partition offset
consumer producer worker cron job schedule retry backoff timeout deadline latency throughput
budget quota limit threshold alert alarm page incident outage postmortem runbook playbook
dashboard panel metric histogram percentile trace span log line error exception panic crash
leak memory cpu disk inode volume snapshot backup restore replica primary failover quorum
leader election lease lock mutex semaphore deadlock race condition flag toggle rollout canary
blue green cluster node pod container image registry tag digest manifest chart values secret
certificate cert key rotation token session cookie header payload body request response
endpoint route handler middleware controller model view template component hook state store
reducer selector fixture factory mock stub spy test suite coverage lint format style guide
convention naming branch commit merge rebase conflict review approval checklist pipeline stage
artifact build cache layer dependency lockfile version semver changelog tag hotfix patch
bucket object prefix lifecycle policy role permission grant scope audience claim issuer
webhook signature payload event stream subscription channel notification email template
bounce complaint suppression domain dns record ttl cname apex certificate renewal invoice
receipt refund charge dispute payout balance currency exchange rate tax vat customer account
tenant workspace organization plan tier subscription trial seat license feature experiment
cohort funnel conversion retention churn report export import csv parquet column table row
partition shard replica vacuum bloat autovacuum wal checkpoint archive pitr connection pool
pgbouncer transaction isolation constraint foreign key unique sequence trigger function view
materialized refresh job dag task sensor operator backfill watermark window join aggregate
dedup idempotency key outbox saga compensation contract interface adapter client sdk wrapper
pagination cursor filter sort facet ranking relevance synonym stemming tokenizer embedding
vector similarity threshold batch chunk payload compression gzip brotli header etag cors
csp hsts redirect origin cdn purge invalidation edge worker function cold start warmup
concurrency parallelism thread process fork signal sigterm graceful shutdown healthcheck
readiness liveness probe sidecar init container daemonset statefulset deployment service
ingress egress firewall allowlist denylist ip range subnet vpc peering nat gateway bastion
ssh key agent forwarding tunnel vpn mesh tls mtls handshake cipher protocol http2 http3
websocket sse polling long poll heartbeat keepalive buffer backpressure overflow underflow
encoding utf8 locale timezone utc offset daylight clock skew drift ntp timestamp epoch
uuid ulid slug id collision hash checksum digest signature verification audit trail log
retention ttl expiry eviction lru warm cold hot tier archive glacier cost bill spend
invoice forecast capacity scaling autoscaler hpa vpa spot instance reservation savings
screenshot storybook design token theme palette font icon sprite layout grid breakpoint
accessibility aria contrast focus keyboard screen reader translation locale plural string
onboarding signup login logout password reset mfa otp passkey sso saml oidc scim directory
""".split()

VERBS = """
deploy ship release roll back migrate restart drain cordon scale bump pin upgrade downgrade
rotate renew revoke purge invalidate reindex vacuum backfill replay rerun retry squash rebase
merge cherry-pick tag publish promote demote archive restore snapshot provision decommission
patch hotfix bisect profile benchmark trace debug log alert page escalate silence ack resolve
review approve lint format typecheck test mock stub seed truncate drop rename split shard
throttle rate-limit batch debounce cache warm evict flush sync mirror export import upload
download compress encrypt decrypt sign verify hash dedupe normalize validate sanitize escape
quote parse serialize render hydrate prefetch paginate sort filter rank index embed label
""".split()

ADJECTIVES = """
flaky slow stale broken noisy missing duplicate orphaned dangling leaking blocking idle hot
cold warm large small nightly weekly monthly hourly daily legacy new old primary secondary
read-only writable public private internal external staging production preview ephemeral
canary shadow partial full incremental atomic idempotent eventual strict lenient cheap
expensive regional global multi-tenant single-tenant encrypted signed unsigned compressed
""".split()

WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
ENVS = "prod production staging dev preview sandbox qa".split()

TOPIC_PHRASES = """
deploys|releases|database migrations|on-call|incident response|backups|disaster recovery|
secrets|access control|billing|payments|email delivery|search relevance|observability|
logging|alerting|tracing|ci|testing|code review|release process|dependency updates|
performance|cost|capacity planning|security|compliance|gdpr|data retention|analytics|
feature flags|caching|queues|background jobs|cron|dns|tls|cdn|networking|vpn|kubernetes|
containers|infrastructure as code|monitoring|uptime|status page|customer support|onboarding|
authentication|authorization|rate limiting|webhooks|api design|versioning|documentation|
style|linting|formatting|typing|frontend|mobile|accessibility|localization|design system|
data pipeline|etl|warehouse|reporting|machine learning|embeddings|experiments|pricing|
invoices|refunds|taxes|fraud|sync|offline mode|storage|uploads|media|thumbnails|
""".replace("\n", "").strip("|").split("|")

FILLER_SENTENCES = (
    "This came up after the {incident} on {weekday}.",
    "{person} confirmed it in the {channel} thread.",
    "Check the {noun} dashboard in {tech} before and after.",
    "Do not {verb} the {noun} by hand; the pipeline does it.",
    "The {adj} {noun} caused most of the pages last quarter.",
    "Expect about {n} minutes for the {noun} to finish on {env}.",
    "If the {noun} fails, {verb} it once, then page {person}.",
    "Old notes mention {tech2}; that was replaced by {tech}.",
    "Ask {person} before changing the {noun} {noun2}.",
    "The {svc} owns the {noun}; everything else reads it.",
    "Run it from {host}, not from a laptop.",
    "We keep {n} days of {noun} in {tech}.",
    "Numbers for {env}: p95 {n} ms, error rate under 0.{n2}%.",
    "See the runbook section on {noun} {noun2}.",
    "It only matters when the {noun} is {adj}.",
)

COMMANDS = (
    "kubectl -n {env} rollout restart deploy/{svc}",
    "kubectl -n {env} logs deploy/{svc} --since=15m",
    "terraform -chdir=infra/{env} plan -target=module.{svcu}",
    "psql \"$DATABASE_URL\" -c 'select count(*) from {noun}s'",
    "make release VERSION=v{n}.{n2}.0",
    "gh pr create --base main --label {noun}",
    "ssh {host} sudo systemctl restart {svc}",
    "restic -r s3:backups/{project} snapshots --latest {n2}",
    "helm upgrade {svc} charts/{svc} -n {env} -f values/{env}.yaml",
    "curl -fsS https://{svc}.{project}.internal/healthz",
    "redis-cli -h {host} --scan --pattern '{noun}:*' | head",
    "python -m {svcu}.tools.{verbu} --dry-run",
    "git tag -s v{n}.{n2}.0 -m 'release {n}.{n2}'",
    "docker compose -f ops/{env}.yml up -d {svc}",
)

CHANNELS = "#ops #deploys #incidents #backend #frontend #infra #billing #support #data #mobile".split()
