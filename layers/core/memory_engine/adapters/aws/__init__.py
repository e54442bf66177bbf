"""The AWS backend: DynamoDB store, SQS FIFO queue, OpenSearch index, remote embedder.

Import the classes from their modules (`dynamodb_store`, `sqs_queue`, `opensearch_index`,
`remote_embedder`): this package imports nothing, and every module imports boto3 or opensearch-py
only when a client is first needed, so a function pays at cold start only for what it uses.
"""
