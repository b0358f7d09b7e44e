// A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).
//
// The referee writes MessagePack maps to stdin, back to back; the bot answers each decide
// and react with one action on stdout. Everything else it prints goes to stderr (the
// referee keeps it in a log): Console.Out is pointed at stderr so that a stray
// Console.WriteLine cannot break the protocol. The decisions are made in Strategy.cs.
using System;
using System.Collections.Generic;
using System.IO;

namespace Taki
{
    public static class Bot
    {
        const long Protocol = 1;
        static Stream output;

        /// <summary>Writes one message at once: nothing waits in a buffer.</summary>
        static void Send(MsgPackWriter message)
        {
            byte[] bytes = message.ToArray();
            output.Write(bytes, 0, bytes.Length);
            output.Flush();
        }

        static void Answer(Dictionary<string, object> request)
        {
            var legal = new List<Action>();
            foreach (object entry in (List<object>)request["legal"])
            {
                legal.Add(Action.From((Dictionary<string, object>)entry));
            }
            int choice = 0;
            try
            {
                choice = Strategy.Choose(View.From((Dictionary<string, object>)request["view"]), legal);
                if (choice < 0 || choice >= legal.Count)
                {
                    throw new InvalidOperationException("Choose returned " + choice + " for "
                        + legal.Count + " legal actions");
                }
            }
            catch (Exception e)
            {
                // A bug in the strategy must not cost the game.
                Console.Error.WriteLine("strategy failed, playing the first legal action: " + e);
                choice = 0;
            }
            // Declaring "last card" costs nothing when it is not needed: always declare.
            Send(new MsgPackWriter().MapHeader(4)
                .String("type").String("action")
                .String("id").Integer((long)request["id"])
                .String("choice").Integer(choice)
                .String("last_card").Boolean(true));
        }

        static void Handle(Dictionary<string, object> message, string name)
        {
            object type;
            message.TryGetValue("type", out type);
            switch (type as string)
            {
                case "hello":
                    object version;
                    if (!message.TryGetValue("protocol", out version) || !(version is long)
                        || (long)version != Protocol)
                    {
                        Console.Error.WriteLine("unsupported protocol version " + version);
                        Environment.Exit(1);
                    }
                    Send(new MsgPackWriter().MapHeader(3)
                        .String("type").String("bot_hello")
                        .String("protocol").Integer(Protocol)
                        .String("name").String(name));
                    break;
                case "decide":
                case "react":
                    Answer(message);
                    break;
                case "game_start":
                case "game_over":
                    break; // the seat, the rules and the results: keep what your strategy needs
                case "error":
                    Console.Error.WriteLine("forfeited: " + message["reason"] + ": " + message["message"]);
                    Environment.Exit(0);
                    break;
                case "shutdown":
                    Environment.Exit(0);
                    break;
                default:
                    Console.Error.WriteLine("ignoring a message of unknown type " + type);
                    break;
            }
        }

        public static int Main(string[] args)
        {
            string name = args.Length > 0 ? args[0] : "csharp-kit";
            output = Console.OpenStandardOutput();
            Console.SetOut(Console.Error);
            // The reader returns whole messages, however the bytes arrive.
            var reader = new MsgPackReader(Console.OpenStandardInput());
            object message;
            while (reader.TryRead(out message))
            {
                var map = message as Dictionary<string, object>;
                if (map != null) Handle(map, name);
                else Console.Error.WriteLine("ignoring a message that is not a map");
            }
            return 0; // end of input: the referee has gone
        }
    }
}
