"""The fork server (fork_server: its loop, requests and sessions; pool: its children born,
kept warm and reaped; children: one child's state; spawning: a child's clone and go; cloner:
the quiet process they are cloned from), the server's client of it (runner) and the
result the client sees, made from what a child reported and how it ended (child_report). May import wire/, the kernel side at the top of sandbox/,
restricted/ (to warm it) and the settings modules."""
