"""What the tests share: worlds per graph, runtimes on each backend, doubles, and the emulated cloud."""
