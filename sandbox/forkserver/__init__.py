"""The fork server (fork_server: its loop, requests and sessions; pool: its children born,
kept warm and reaped; children: one child's state; spawning: a child's clone and go; cloner:
the quiet process they are cloned from), the server's client of it (runner) and what a
child's answer becomes (outcome). May import wire/, the kernel side at the top of sandbox/,
restricted/ (to warm it) and the settings modules."""
