"""ruscope collectors: config models, the collectors (the only code importing azure.* clients), the store, the CLI."""
