"""The AWS services moto lacks, emulated: Amazon DataZone (:mod:`.datazone`) and MSK Connect
(:mod:`.kafkaconnect`). Each keeps its state per region and account in the instance."""
