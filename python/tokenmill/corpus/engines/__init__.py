"""How work runs: :mod:`~tokenmill.corpus.engines.local` reads ahead on a thread of this
process, :mod:`~tokenmill.corpus.engines.ray` runs tasks on a Ray cluster. An engine knows
nothing of corpora or tokenizers: the caller hands it the work (a producer, a task body), so
the corpus driver and the trainer depend on the engines and never the other way round."""
