module github.com/theory-cloud/tabletheoryd/clients/go

go 1.23
