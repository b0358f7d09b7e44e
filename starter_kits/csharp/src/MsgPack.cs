// A small MessagePack reader and writer: the part of the format this protocol uses
// (PROTOCOL.md section 2). Written by hand because Debian, whose packages this kit builds
// from, has no MessagePack library for C#; with NuGet, MessagePack-CSharp does the same.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;

namespace Taki
{
    /// <summary>Reads whole MessagePack values from a stream, however its bytes arrive.
    /// Values come out as plain objects: null, bool, long, double, string, byte[],
    /// List&lt;object&gt; and Dictionary&lt;string, object&gt;.</summary>
    public sealed class MsgPackReader
    {
        readonly Stream input;
        readonly byte[] buffer = new byte[65536];
        int start, end;

        public MsgPackReader(Stream input) { this.input = input; }

        /// <summary>The next value, or false at the end of the input.</summary>
        public bool TryRead(out object value)
        {
            value = null;
            if (start == end && !Fill()) return false;
            value = ReadValue();
            return true;
        }

        bool Fill()
        {
            int n = input.Read(buffer, 0, buffer.Length);
            start = 0;
            end = Math.Max(n, 0);
            return n > 0;
        }

        byte Byte()
        {
            if (start == end && !Fill()) throw new EndOfStreamException("input ended inside a message");
            return buffer[start++];
        }

        byte[] Bytes(long count)
        {
            var bytes = new byte[count];
            for (long i = 0; i < count; i++) bytes[i] = Byte();
            return bytes;
        }

        ulong BigEndian(int size)
        {
            ulong n = 0;
            for (int i = 0; i < size; i++) n = (n << 8) | Byte();
            return n;
        }

        object ReadValue()
        {
            byte b = Byte();
            if (b <= 0x7f) return (long)b;
            if (b >= 0xe0) return (long)(sbyte)b;
            if (b >= 0xa0 && b <= 0xbf) return Str(b & 0x1f);
            if (b >= 0x90 && b <= 0x9f) return Array(b & 0x0f);
            if (b >= 0x80 && b <= 0x8f) return Map(b & 0x0f);
            switch (b)
            {
                case 0xc0: return null;
                case 0xc2: return false;
                case 0xc3: return true;
                case 0xc4: return Bytes((long)BigEndian(1));
                case 0xc5: return Bytes((long)BigEndian(2));
                case 0xc6: return Bytes((long)BigEndian(4));
                case 0xc7: { long n = (long)BigEndian(1); Byte(); return Bytes(n); }
                case 0xc8: { long n = (long)BigEndian(2); Byte(); return Bytes(n); }
                case 0xc9: { long n = (long)BigEndian(4); Byte(); return Bytes(n); }
                case 0xca: return (double)BitConverter.ToSingle(BitConverter.GetBytes((uint)BigEndian(4)), 0);
                case 0xcb: return BitConverter.Int64BitsToDouble((long)BigEndian(8));
                case 0xcc: return (long)BigEndian(1);
                case 0xcd: return (long)BigEndian(2);
                case 0xce: return (long)BigEndian(4);
                case 0xcf: return (long)BigEndian(8);
                case 0xd0: return (long)(sbyte)BigEndian(1);
                case 0xd1: return (long)(short)BigEndian(2);
                case 0xd2: return (long)(int)BigEndian(4);
                case 0xd3: return (long)BigEndian(8);
                case 0xd4: Byte(); return Bytes(1);
                case 0xd5: Byte(); return Bytes(2);
                case 0xd6: Byte(); return Bytes(4);
                case 0xd7: Byte(); return Bytes(8);
                case 0xd8: Byte(); return Bytes(16);
                case 0xd9: return Str((long)BigEndian(1));
                case 0xda: return Str((long)BigEndian(2));
                case 0xdb: return Str((long)BigEndian(4));
                case 0xdc: return Array((long)BigEndian(2));
                case 0xdd: return Array((long)BigEndian(4));
                case 0xde: return Map((long)BigEndian(2));
                case 0xdf: return Map((long)BigEndian(4));
                default: throw new InvalidDataException("not MessagePack: byte 0x" + b.ToString("x2"));
            }
        }

        string Str(long length) { return Encoding.UTF8.GetString(Bytes(length)); }

        List<object> Array(long count)
        {
            var list = new List<object>();
            for (long i = 0; i < count; i++) list.Add(ReadValue());
            return list;
        }

        Dictionary<string, object> Map(long count)
        {
            var map = new Dictionary<string, object>();
            for (long i = 0; i < count; i++)
            {
                object key = ReadValue();
                map[key as string ?? Convert.ToString(key)] = ReadValue();
            }
            return map;
        }
    }

    /// <summary>Writes one message: maps with string keys, strings, integers, booleans and
    /// nil, each in its shortest encoding.</summary>
    public sealed class MsgPackWriter
    {
        readonly MemoryStream bytes = new MemoryStream();

        public byte[] ToArray() { return bytes.ToArray(); }

        void Big(ulong n, int size)
        {
            for (int i = size - 1; i >= 0; i--) bytes.WriteByte((byte)(n >> (8 * i)));
        }

        public MsgPackWriter MapHeader(int count)
        {
            if (count < 16) bytes.WriteByte((byte)(0x80 | count));
            else { bytes.WriteByte(0xde); Big((ulong)count, 2); }
            return this;
        }

        public MsgPackWriter String(string s)
        {
            byte[] utf8 = Encoding.UTF8.GetBytes(s);
            int n = utf8.Length;
            if (n < 32) bytes.WriteByte((byte)(0xa0 | n));
            else if (n < 0x100) { bytes.WriteByte(0xd9); Big((ulong)n, 1); }
            else if (n < 0x10000) { bytes.WriteByte(0xda); Big((ulong)n, 2); }
            else { bytes.WriteByte(0xdb); Big((ulong)n, 4); }
            bytes.Write(utf8, 0, n);
            return this;
        }

        public MsgPackWriter Integer(long n)
        {
            if (n >= 0 && n <= 0x7f) bytes.WriteByte((byte)n);
            else if (n < 0 && n >= -32) bytes.WriteByte((byte)(sbyte)n);
            else if (n >= 0 && n <= 0xffffffffL) { bytes.WriteByte(0xce); Big((ulong)n, 4); }
            else { bytes.WriteByte(0xd3); Big((ulong)n, 8); }
            return this;
        }

        public MsgPackWriter Boolean(bool b)
        {
            bytes.WriteByte(b ? (byte)0xc3 : (byte)0xc2);
            return this;
        }
    }
}
