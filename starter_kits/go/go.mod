module taki-bot

go 1.19

require github.com/vmihailenco/msgpack/v5 v5.3.5
