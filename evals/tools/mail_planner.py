def build() -> None:
    pass
