// SPDX-License-Identifier: Apache-2.0
// Smoke test of the DynamoDB listener with aws-sdk-go-v2: create a table,
// put, get, query, transact. Endpoint from DDB_ENDPOINT; any region and
// dummy credentials. Exits non-zero on the first surprise.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func main() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-west-2"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("dummy", "dummy", "")))
	must(err)
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(os.Getenv("DDB_ENDPOINT"))
	})
	table := aws.String("go_smoke")
	_, err = db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   table,
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN}},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
	})
	must(err)
	must(dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: table}, 10e9))
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberN{Value: "1"},
		"v": &types.AttributeValueMemberS{Value: "hello"}}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item})
	must(err)
	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberN{Value: "1"}}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key})
	must(err)
	if v, ok := got.Item["v"].(*types.AttributeValueMemberS); !ok || v.Value != "hello" {
		fail("GetItem returned %v", got.Item)
	}
	q, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table,
		KeyConditionExpression:    aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "a"}}})
	must(err)
	if q.Count != 1 {
		fail("Query counted %d", q.Count)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}}}})
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) || len(canceled.CancellationReasons) != 1 ||
		aws.ToString(canceled.CancellationReasons[0].Code) != "ConditionalCheckFailed" {
		fail("TransactWriteItems: %v", err)
	}
	_, err = db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("nope_nope")})
	var missing *types.ResourceNotFoundException
	if !errors.As(err, &missing) {
		fail("DescribeTable of a missing table: %v", err)
	}
	fmt.Println("go v2 smoke: ok")
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "go v2 smoke: "+f+"\n", a...)
	os.Exit(1)
}
