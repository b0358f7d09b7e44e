package taki;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;

/**
 * A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).
 *
 * <p>The referee writes MessagePack maps to stdin, back to back; the bot answers each
 * {@code decide} and {@code react} with one {@code action} on stdout. Everything else it
 * prints goes to stderr (the referee keeps it in a log): {@code System.out} is pointed at
 * stderr so that a stray {@code println} cannot break the protocol. The decisions are made
 * in {@link Strategy}.
 */
public final class Bot {
    static final int PROTOCOL = 1;

    private final MessagePacker out;
    private final String name;

    Bot(MessagePacker out, String name) {
        this.out = out;
        this.name = name;
    }

    /**
     * Leaves at once: after {@code error} the referee allows 200 ms to exit, which a JVM's
     * orderly shutdown can take on a busy machine. Nothing is left to save, so halt.
     */
    static void leave(int status) {
        System.err.flush();
        Runtime.getRuntime().halt(status);
    }

    @SuppressWarnings("unchecked")
    void answer(Map<String, Object> request) throws IOException {
        List<Action> legal = Wire.legal((List<Map<String, Object>>) request.get("legal"));
        int choice = 0;
        try {
            choice = Strategy.choose(Wire.view((Map<String, Object>) request.get("view")), legal);
            if (choice < 0 || choice >= legal.size()) {
                throw new IllegalStateException("choose returned " + choice + " for "
                        + legal.size() + " legal actions");
            }
        } catch (RuntimeException e) {
            // A bug in the strategy must not cost the game.
            System.err.println("strategy failed, playing the first legal action: " + e);
            choice = 0;
        }
        out.packMapHeader(4);
        out.packString("type").packString("action");
        out.packString("id").packLong((Long) request.get("id"));
        out.packString("choice").packInt(choice);
        // Declaring "last card" costs nothing when it is not needed: always declare.
        out.packString("last_card").packBoolean(true);
        out.flush();
    }

    /** Handles one message from the referee. */
    void handle(Map<String, Object> message) throws IOException {
        Object type = message.get("type");
        if ("hello".equals(type)) {
            Object version = message.get("protocol");
            if (!(version instanceof Long) || (Long) version != PROTOCOL) {
                System.err.println("unsupported protocol version " + version);
                leave(1);
            }
            out.packMapHeader(3);
            out.packString("type").packString("bot_hello");
            out.packString("protocol").packInt(PROTOCOL);
            out.packString("name").packString(name);
            out.flush();
        } else if ("decide".equals(type) || "react".equals(type)) {
            answer(message);
        } else if ("game_start".equals(type) || "game_over".equals(type)) {
            // the seat, the rules and the results: keep what your strategy needs
        } else if ("error".equals(type)) {
            // No string concatenation here: its first use costs a JVM tens of milliseconds.
            System.err.print("forfeited: ");
            System.err.println(message.get("message"));
            leave(0);
        } else if ("shutdown".equals(type)) {
            leave(0);
        } else {
            System.err.println("ignoring a message of unknown type " + type);
        }
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws IOException {
        PrintStream protocolOut = new PrintStream(new BufferedOutputStream(System.out), false);
        System.setOut(System.err);
        String name = args.length > 0 ? args[0] : "java-kit";
        Bot bot = new Bot(MessagePack.newDefaultPacker(protocolOut), name);
        // A streaming decoder: messages may arrive in pieces, or several in one read.
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(System.in)) {
            while (in.hasNext()) {
                Value value = in.unpackValue();
                if (value.isMapValue()) {
                    bot.handle((Map<String, Object>) Wire.plain(value));
                } else {
                    System.err.println("ignoring a message that is not a map");
                }
            }
        }
        leave(0); // end of input: the referee has gone
    }
}
