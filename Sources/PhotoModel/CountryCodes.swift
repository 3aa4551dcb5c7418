/// ISO 3166-1 country codes: files write the three-letter form (IPTC-IIM's Country code is
/// alpha-3; XMP's CountryCode either), the gazetteer the two-letter one; places are grouped
/// by the two-letter code, so a file's `PRT` and GeoNames' `PT` are one country. The table is
/// Debian's iso-codes 4.15 (`iso_3166-1.json`), 249 countries, with their names.
public enum CountryCodes {
    /// `alpha3 + alpha2` pairs, sorted by alpha-3, five letters and a space each.
    static let table: String =
        "ABWAW AFGAF AGOAO AIAAI ALAAX ALBAL ANDAD AREAE ARGAR ARMAM ASMAS ATAAQ ATFTF ATGAG AUSAU AUTAT " +
        "AZEAZ BDIBI BELBE BENBJ BESBQ BFABF BGDBD BGRBG BHRBH BHSBS BIHBA BLMBL BLRBY BLZBZ BMUBM BOLBO " +
        "BRABR BRBBB BRNBN BTNBT BVTBV BWABW CAFCF CANCA CCKCC CHECH CHLCL CHNCN CIVCI CMRCM CODCD COGCG " +
        "COKCK COLCO COMKM CPVCV CRICR CUBCU CUWCW CXRCX CYMKY CYPCY CZECZ DEUDE DJIDJ DMADM DNKDK DOMDO " +
        "DZADZ ECUEC EGYEG ERIER ESHEH ESPES ESTEE ETHET FINFI FJIFJ FLKFK FRAFR FROFO FSMFM GABGA GBRGB " +
        "GEOGE GGYGG GHAGH GIBGI GINGN GLPGP GMBGM GNBGW GNQGQ GRCGR GRDGD GRLGL GTMGT GUFGF GUMGU GUYGY " +
        "HKGHK HMDHM HNDHN HRVHR HTIHT HUNHU IDNID IMNIM INDIN IOTIO IRLIE IRNIR IRQIQ ISLIS ISRIL ITAIT " +
        "JAMJM JEYJE JORJO JPNJP KAZKZ KENKE KGZKG KHMKH KIRKI KNAKN KORKR KWTKW LAOLA LBNLB LBRLR LBYLY " +
        "LCALC LIELI LKALK LSOLS LTULT LUXLU LVALV MACMO MAFMF MARMA MCOMC MDAMD MDGMG MDVMV MEXMX MHLMH " +
        "MKDMK MLIML MLTMT MMRMM MNEME MNGMN MNPMP MOZMZ MRTMR MSRMS MTQMQ MUSMU MWIMW MYSMY MYTYT NAMNA " +
        "NCLNC NERNE NFKNF NGANG NICNI NIUNU NLDNL NORNO NPLNP NRUNR NZLNZ OMNOM PAKPK PANPA PCNPN PERPE " +
        "PHLPH PLWPW PNGPG POLPL PRIPR PRKKP PRTPT PRYPY PSEPS PYFPF QATQA REURE ROURO RUSRU RWARW SAUSA " +
        "SDNSD SENSN SGPSG SGSGS SHNSH SJMSJ SLBSB SLESL SLVSV SMRSM SOMSO SPMPM SRBRS SSDSS STPST SURSR " +
        "SVKSK SVNSI SWESE SWZSZ SXMSX SYCSC SYRSY TCATC TCDTD TGOTG THATH TJKTJ TKLTK TKMTM TLSTL TONTO " +
        "TTOTT TUNTN TURTR TUVTV TWNTW TZATZ UGAUG UKRUA UMIUM URYUY USAUS UZBUZ VATVA VCTVC VENVE VGBVG " +
        "VIRVI VNMVN VUTVU WLFWF WSMWS YEMYE ZAFZA ZMBZM ZWEZW "

    static let byAlpha3: [String: String] = {
        var map: [String: String] = [:]
        for pair in table.split(separator: " ") where pair.count == 5 {
            map[String(pair.prefix(3))] = String(pair.suffix(2))
        }
        return map
    }()

    static let alpha2s = Set(byAlpha3.values)

    /// Country names (iso-codes' name, official and common names, lower case) and a few names
    /// photographers' tools write (`USA`, `UK`, `Holland`), each with its two-letter code,
    /// `name U+001E code` separated by U+001F.
    static let namesTable: String =
        "afghanistan\u{1E}AF\u{1F}albania\u{1E}AL\u{1F}algeria\u{1E}DZ\u{1F}american samoa\u{1E}AS\u{1F}andorra\u{1E}AD\u{1F}angola\u{1E}AO\u{1F}" +
        "anguilla\u{1E}AI\u{1F}antarctica\u{1E}AQ\u{1F}antigua and barbuda\u{1E}AG\u{1F}arab republic of egypt\u{1E}EG\u{1F}argentina\u{1E}AR\u{1F}argentine republic\u{1E}AR\u{1F}" +
        "armenia\u{1E}AM\u{1F}aruba\u{1E}AW\u{1F}australia\u{1E}AU\u{1F}austria\u{1E}AT\u{1F}azerbaijan\u{1E}AZ\u{1F}bahamas\u{1E}BS\u{1F}" +
        "bahrain\u{1E}BH\u{1F}bangladesh\u{1E}BD\u{1F}barbados\u{1E}BB\u{1F}belarus\u{1E}BY\u{1F}belgium\u{1E}BE\u{1F}belize\u{1E}BZ\u{1F}" +
        "benin\u{1E}BJ\u{1F}bermuda\u{1E}BM\u{1F}bhutan\u{1E}BT\u{1F}bolivarian republic of venezuela\u{1E}VE\u{1F}bolivia\u{1E}BO\u{1F}bolivia, plurinational state of\u{1E}BO\u{1F}" +
        "bonaire, sint eustatius and saba\u{1E}BQ\u{1F}bosnia and herzegovina\u{1E}BA\u{1F}botswana\u{1E}BW\u{1F}bouvet island\u{1E}BV\u{1F}brazil\u{1E}BR\u{1F}british indian ocean territory\u{1E}IO\u{1F}" +
        "british virgin islands\u{1E}VG\u{1F}brunei\u{1E}BN\u{1F}brunei darussalam\u{1E}BN\u{1F}bulgaria\u{1E}BG\u{1F}burkina faso\u{1E}BF\u{1F}burundi\u{1E}BI\u{1F}" +
        "cabo verde\u{1E}CV\u{1F}cambodia\u{1E}KH\u{1F}cameroon\u{1E}CM\u{1F}canada\u{1E}CA\u{1F}cayman islands\u{1E}KY\u{1F}central african republic\u{1E}CF\u{1F}" +
        "chad\u{1E}TD\u{1F}chile\u{1E}CL\u{1F}china\u{1E}CN\u{1F}christmas island\u{1E}CX\u{1F}cocos (keeling) islands\u{1E}CC\u{1F}colombia\u{1E}CO\u{1F}" +
        "commonwealth of dominica\u{1E}DM\u{1F}commonwealth of the bahamas\u{1E}BS\u{1F}commonwealth of the northern mariana islands\u{1E}MP\u{1F}comoros\u{1E}KM\u{1F}congo\u{1E}CG\u{1F}congo, the democratic republic of the\u{1E}CD\u{1F}" +
        "cook islands\u{1E}CK\u{1F}costa rica\u{1E}CR\u{1F}croatia\u{1E}HR\u{1F}cuba\u{1E}CU\u{1F}curaçao\u{1E}CW\u{1F}cyprus\u{1E}CY\u{1F}" +
        "czech republic\u{1E}CZ\u{1F}czechia\u{1E}CZ\u{1F}côte d'ivoire\u{1E}CI\u{1F}democratic people's republic of korea\u{1E}KP\u{1F}democratic republic of sao tome and principe\u{1E}ST\u{1F}democratic republic of timor-leste\u{1E}TL\u{1F}" +
        "democratic socialist republic of sri lanka\u{1E}LK\u{1F}denmark\u{1E}DK\u{1F}djibouti\u{1E}DJ\u{1F}dominica\u{1E}DM\u{1F}dominican republic\u{1E}DO\u{1F}eastern republic of uruguay\u{1E}UY\u{1F}" +
        "ecuador\u{1E}EC\u{1F}egypt\u{1E}EG\u{1F}el salvador\u{1E}SV\u{1F}england\u{1E}GB\u{1F}equatorial guinea\u{1E}GQ\u{1F}eritrea\u{1E}ER\u{1F}" +
        "estonia\u{1E}EE\u{1F}eswatini\u{1E}SZ\u{1F}ethiopia\u{1E}ET\u{1F}falkland islands (malvinas)\u{1E}FK\u{1F}faroe islands\u{1E}FO\u{1F}federal democratic republic of ethiopia\u{1E}ET\u{1F}" +
        "federal democratic republic of nepal\u{1E}NP\u{1F}federal republic of germany\u{1E}DE\u{1F}federal republic of nigeria\u{1E}NG\u{1F}federal republic of somalia\u{1E}SO\u{1F}federated states of micronesia\u{1E}FM\u{1F}federative republic of brazil\u{1E}BR\u{1F}" +
        "fiji\u{1E}FJ\u{1F}finland\u{1E}FI\u{1F}france\u{1E}FR\u{1F}french guiana\u{1E}GF\u{1F}french polynesia\u{1E}PF\u{1F}french republic\u{1E}FR\u{1F}" +
        "french southern territories\u{1E}TF\u{1F}gabon\u{1E}GA\u{1F}gabonese republic\u{1E}GA\u{1F}gambia\u{1E}GM\u{1F}georgia\u{1E}GE\u{1F}germany\u{1E}DE\u{1F}" +
        "ghana\u{1E}GH\u{1F}gibraltar\u{1E}GI\u{1F}grand duchy of luxembourg\u{1E}LU\u{1F}great britain\u{1E}GB\u{1F}greece\u{1E}GR\u{1F}greenland\u{1E}GL\u{1F}" +
        "grenada\u{1E}GD\u{1F}guadeloupe\u{1E}GP\u{1F}guam\u{1E}GU\u{1F}guatemala\u{1E}GT\u{1F}guernsey\u{1E}GG\u{1F}guinea\u{1E}GN\u{1F}" +
        "guinea-bissau\u{1E}GW\u{1F}guyana\u{1E}GY\u{1F}haiti\u{1E}HT\u{1F}hashemite kingdom of jordan\u{1E}JO\u{1F}heard island and mcdonald islands\u{1E}HM\u{1F}hellenic republic\u{1E}GR\u{1F}" +
        "holland\u{1E}NL\u{1F}holy see (vatican city state)\u{1E}VA\u{1F}honduras\u{1E}HN\u{1F}hong kong\u{1E}HK\u{1F}hong kong special administrative region of china\u{1E}HK\u{1F}hungary\u{1E}HU\u{1F}" +
        "iceland\u{1E}IS\u{1F}independent state of papua new guinea\u{1E}PG\u{1F}independent state of samoa\u{1E}WS\u{1F}india\u{1E}IN\u{1F}indonesia\u{1E}ID\u{1F}iran\u{1E}IR\u{1F}" +
        "iran, islamic republic of\u{1E}IR\u{1F}iraq\u{1E}IQ\u{1F}ireland\u{1E}IE\u{1F}islamic republic of afghanistan\u{1E}AF\u{1F}islamic republic of iran\u{1E}IR\u{1F}islamic republic of mauritania\u{1E}MR\u{1F}" +
        "islamic republic of pakistan\u{1E}PK\u{1F}isle of man\u{1E}IM\u{1F}israel\u{1E}IL\u{1F}italian republic\u{1E}IT\u{1F}italy\u{1E}IT\u{1F}ivory coast\u{1E}CI\u{1F}" +
        "jamaica\u{1E}JM\u{1F}japan\u{1E}JP\u{1F}jersey\u{1E}JE\u{1F}jordan\u{1E}JO\u{1F}kazakhstan\u{1E}KZ\u{1F}kenya\u{1E}KE\u{1F}" +
        "kingdom of bahrain\u{1E}BH\u{1F}kingdom of belgium\u{1E}BE\u{1F}kingdom of bhutan\u{1E}BT\u{1F}kingdom of cambodia\u{1E}KH\u{1F}kingdom of denmark\u{1E}DK\u{1F}kingdom of eswatini\u{1E}SZ\u{1F}" +
        "kingdom of lesotho\u{1E}LS\u{1F}kingdom of morocco\u{1E}MA\u{1F}kingdom of norway\u{1E}NO\u{1F}kingdom of saudi arabia\u{1E}SA\u{1F}kingdom of spain\u{1E}ES\u{1F}kingdom of sweden\u{1E}SE\u{1F}" +
        "kingdom of thailand\u{1E}TH\u{1F}kingdom of the netherlands\u{1E}NL\u{1F}kingdom of tonga\u{1E}TO\u{1F}kiribati\u{1E}KI\u{1F}korea, democratic people's republic of\u{1E}KP\u{1F}korea, republic of\u{1E}KR\u{1F}" +
        "kuwait\u{1E}KW\u{1F}kyrgyz republic\u{1E}KG\u{1F}kyrgyzstan\u{1E}KG\u{1F}lao people's democratic republic\u{1E}LA\u{1F}laos\u{1E}LA\u{1F}latvia\u{1E}LV\u{1F}" +
        "lebanese republic\u{1E}LB\u{1F}lebanon\u{1E}LB\u{1F}lesotho\u{1E}LS\u{1F}liberia\u{1E}LR\u{1F}libya\u{1E}LY\u{1F}liechtenstein\u{1E}LI\u{1F}" +
        "lithuania\u{1E}LT\u{1F}luxembourg\u{1E}LU\u{1F}macao\u{1E}MO\u{1F}macao special administrative region of china\u{1E}MO\u{1F}macedonia\u{1E}MK\u{1F}madagascar\u{1E}MG\u{1F}" +
        "malawi\u{1E}MW\u{1F}malaysia\u{1E}MY\u{1F}maldives\u{1E}MV\u{1F}mali\u{1E}ML\u{1F}malta\u{1E}MT\u{1F}marshall islands\u{1E}MH\u{1F}" +
        "martinique\u{1E}MQ\u{1F}mauritania\u{1E}MR\u{1F}mauritius\u{1E}MU\u{1F}mayotte\u{1E}YT\u{1F}mexico\u{1E}MX\u{1F}micronesia\u{1E}FM\u{1F}" +
        "micronesia, federated states of\u{1E}FM\u{1F}moldova\u{1E}MD\u{1F}moldova, republic of\u{1E}MD\u{1F}monaco\u{1E}MC\u{1F}mongolia\u{1E}MN\u{1F}montenegro\u{1E}ME\u{1F}" +
        "montserrat\u{1E}MS\u{1F}morocco\u{1E}MA\u{1F}mozambique\u{1E}MZ\u{1F}myanmar\u{1E}MM\u{1F}namibia\u{1E}NA\u{1F}nauru\u{1E}NR\u{1F}" +
        "nepal\u{1E}NP\u{1F}netherlands\u{1E}NL\u{1F}new caledonia\u{1E}NC\u{1F}new zealand\u{1E}NZ\u{1F}nicaragua\u{1E}NI\u{1F}niger\u{1E}NE\u{1F}" +
        "nigeria\u{1E}NG\u{1F}niue\u{1E}NU\u{1F}norfolk island\u{1E}NF\u{1F}north korea\u{1E}KP\u{1F}north macedonia\u{1E}MK\u{1F}northern mariana islands\u{1E}MP\u{1F}" +
        "norway\u{1E}NO\u{1F}oman\u{1E}OM\u{1F}pakistan\u{1E}PK\u{1F}palau\u{1E}PW\u{1F}palestine\u{1E}PS\u{1F}palestine, state of\u{1E}PS\u{1F}" +
        "panama\u{1E}PA\u{1F}papua new guinea\u{1E}PG\u{1F}paraguay\u{1E}PY\u{1F}people's democratic republic of algeria\u{1E}DZ\u{1F}people's republic of bangladesh\u{1E}BD\u{1F}people's republic of china\u{1E}CN\u{1F}" +
        "peru\u{1E}PE\u{1F}philippines\u{1E}PH\u{1F}pitcairn\u{1E}PN\u{1F}plurinational state of bolivia\u{1E}BO\u{1F}poland\u{1E}PL\u{1F}portugal\u{1E}PT\u{1F}" +
        "portuguese republic\u{1E}PT\u{1F}principality of andorra\u{1E}AD\u{1F}principality of liechtenstein\u{1E}LI\u{1F}principality of monaco\u{1E}MC\u{1F}puerto rico\u{1E}PR\u{1F}qatar\u{1E}QA\u{1F}" +
        "republic of albania\u{1E}AL\u{1F}republic of angola\u{1E}AO\u{1F}republic of armenia\u{1E}AM\u{1F}republic of austria\u{1E}AT\u{1F}republic of azerbaijan\u{1E}AZ\u{1F}republic of belarus\u{1E}BY\u{1F}" +
        "republic of benin\u{1E}BJ\u{1F}republic of bosnia and herzegovina\u{1E}BA\u{1F}republic of botswana\u{1E}BW\u{1F}republic of bulgaria\u{1E}BG\u{1F}republic of burundi\u{1E}BI\u{1F}republic of cabo verde\u{1E}CV\u{1F}" +
        "republic of cameroon\u{1E}CM\u{1F}republic of chad\u{1E}TD\u{1F}republic of chile\u{1E}CL\u{1F}republic of colombia\u{1E}CO\u{1F}republic of costa rica\u{1E}CR\u{1F}republic of croatia\u{1E}HR\u{1F}" +
        "republic of cuba\u{1E}CU\u{1F}republic of cyprus\u{1E}CY\u{1F}republic of côte d'ivoire\u{1E}CI\u{1F}republic of djibouti\u{1E}DJ\u{1F}republic of ecuador\u{1E}EC\u{1F}republic of el salvador\u{1E}SV\u{1F}" +
        "republic of equatorial guinea\u{1E}GQ\u{1F}republic of estonia\u{1E}EE\u{1F}republic of fiji\u{1E}FJ\u{1F}republic of finland\u{1E}FI\u{1F}republic of ghana\u{1E}GH\u{1F}republic of guatemala\u{1E}GT\u{1F}" +
        "republic of guinea\u{1E}GN\u{1F}republic of guinea-bissau\u{1E}GW\u{1F}republic of guyana\u{1E}GY\u{1F}republic of haiti\u{1E}HT\u{1F}republic of honduras\u{1E}HN\u{1F}republic of iceland\u{1E}IS\u{1F}" +
        "republic of india\u{1E}IN\u{1F}republic of indonesia\u{1E}ID\u{1F}republic of iraq\u{1E}IQ\u{1F}republic of kazakhstan\u{1E}KZ\u{1F}republic of kenya\u{1E}KE\u{1F}republic of kiribati\u{1E}KI\u{1F}" +
        "republic of latvia\u{1E}LV\u{1F}republic of liberia\u{1E}LR\u{1F}republic of lithuania\u{1E}LT\u{1F}republic of madagascar\u{1E}MG\u{1F}republic of malawi\u{1E}MW\u{1F}republic of maldives\u{1E}MV\u{1F}" +
        "republic of mali\u{1E}ML\u{1F}republic of malta\u{1E}MT\u{1F}republic of mauritius\u{1E}MU\u{1F}republic of moldova\u{1E}MD\u{1F}republic of mozambique\u{1E}MZ\u{1F}republic of myanmar\u{1E}MM\u{1F}" +
        "republic of namibia\u{1E}NA\u{1F}republic of nauru\u{1E}NR\u{1F}republic of nicaragua\u{1E}NI\u{1F}republic of north macedonia\u{1E}MK\u{1F}republic of palau\u{1E}PW\u{1F}republic of panama\u{1E}PA\u{1F}" +
        "republic of paraguay\u{1E}PY\u{1F}republic of peru\u{1E}PE\u{1F}republic of poland\u{1E}PL\u{1F}republic of san marino\u{1E}SM\u{1F}republic of senegal\u{1E}SN\u{1F}republic of serbia\u{1E}RS\u{1F}" +
        "republic of seychelles\u{1E}SC\u{1F}republic of sierra leone\u{1E}SL\u{1F}republic of singapore\u{1E}SG\u{1F}republic of slovenia\u{1E}SI\u{1F}republic of south africa\u{1E}ZA\u{1F}republic of south sudan\u{1E}SS\u{1F}" +
        "republic of suriname\u{1E}SR\u{1F}republic of tajikistan\u{1E}TJ\u{1F}republic of the congo\u{1E}CG\u{1F}republic of the gambia\u{1E}GM\u{1F}republic of the marshall islands\u{1E}MH\u{1F}republic of the niger\u{1E}NE\u{1F}" +
        "republic of the philippines\u{1E}PH\u{1F}republic of the sudan\u{1E}SD\u{1F}republic of trinidad and tobago\u{1E}TT\u{1F}republic of tunisia\u{1E}TN\u{1F}republic of türkiye\u{1E}TR\u{1F}republic of uganda\u{1E}UG\u{1F}" +
        "republic of uzbekistan\u{1E}UZ\u{1F}republic of vanuatu\u{1E}VU\u{1F}republic of yemen\u{1E}YE\u{1F}republic of zambia\u{1E}ZM\u{1F}republic of zimbabwe\u{1E}ZW\u{1F}romania\u{1E}RO\u{1F}" +
        "russia\u{1E}RU\u{1F}russian federation\u{1E}RU\u{1F}rwanda\u{1E}RW\u{1F}rwandese republic\u{1E}RW\u{1F}réunion\u{1E}RE\u{1F}saint barthélemy\u{1E}BL\u{1F}" +
        "saint helena, ascension and tristan da cunha\u{1E}SH\u{1F}saint kitts and nevis\u{1E}KN\u{1F}saint lucia\u{1E}LC\u{1F}saint martin (french part)\u{1E}MF\u{1F}saint pierre and miquelon\u{1E}PM\u{1F}saint vincent and the grenadines\u{1E}VC\u{1F}" +
        "samoa\u{1E}WS\u{1F}san marino\u{1E}SM\u{1F}sao tome and principe\u{1E}ST\u{1F}saudi arabia\u{1E}SA\u{1F}scotland\u{1E}GB\u{1F}senegal\u{1E}SN\u{1F}" +
        "serbia\u{1E}RS\u{1F}seychelles\u{1E}SC\u{1F}sierra leone\u{1E}SL\u{1F}singapore\u{1E}SG\u{1F}sint maarten (dutch part)\u{1E}SX\u{1F}slovak republic\u{1E}SK\u{1F}" +
        "slovakia\u{1E}SK\u{1F}slovenia\u{1E}SI\u{1F}socialist republic of viet nam\u{1E}VN\u{1F}solomon islands\u{1E}SB\u{1F}somalia\u{1E}SO\u{1F}south africa\u{1E}ZA\u{1F}" +
        "south georgia and the south sandwich islands\u{1E}GS\u{1F}south korea\u{1E}KR\u{1F}south sudan\u{1E}SS\u{1F}spain\u{1E}ES\u{1F}sri lanka\u{1E}LK\u{1F}state of israel\u{1E}IL\u{1F}" +
        "state of kuwait\u{1E}KW\u{1F}state of qatar\u{1E}QA\u{1F}sudan\u{1E}SD\u{1F}sultanate of oman\u{1E}OM\u{1F}suriname\u{1E}SR\u{1F}svalbard and jan mayen\u{1E}SJ\u{1F}" +
        "sweden\u{1E}SE\u{1F}swiss confederation\u{1E}CH\u{1F}switzerland\u{1E}CH\u{1F}syria\u{1E}SY\u{1F}syrian arab republic\u{1E}SY\u{1F}taiwan\u{1E}TW\u{1F}" +
        "taiwan, province of china\u{1E}TW\u{1F}tajikistan\u{1E}TJ\u{1F}tanzania\u{1E}TZ\u{1F}tanzania, united republic of\u{1E}TZ\u{1F}thailand\u{1E}TH\u{1F}the netherlands\u{1E}NL\u{1F}" +
        "the state of eritrea\u{1E}ER\u{1F}the state of palestine\u{1E}PS\u{1F}timor-leste\u{1E}TL\u{1F}togo\u{1E}TG\u{1F}togolese republic\u{1E}TG\u{1F}tokelau\u{1E}TK\u{1F}" +
        "tonga\u{1E}TO\u{1F}trinidad and tobago\u{1E}TT\u{1F}tunisia\u{1E}TN\u{1F}turkmenistan\u{1E}TM\u{1F}turks and caicos islands\u{1E}TC\u{1F}tuvalu\u{1E}TV\u{1F}" +
        "türkiye\u{1E}TR\u{1F}u.s.a.\u{1E}US\u{1F}uganda\u{1E}UG\u{1F}uk\u{1E}GB\u{1F}ukraine\u{1E}UA\u{1F}union of the comoros\u{1E}KM\u{1F}" +
        "united arab emirates\u{1E}AE\u{1F}united kingdom\u{1E}GB\u{1F}united kingdom of great britain and northern ireland\u{1E}GB\u{1F}united mexican states\u{1E}MX\u{1F}united republic of tanzania\u{1E}TZ\u{1F}united states\u{1E}US\u{1F}" +
        "united states minor outlying islands\u{1E}UM\u{1F}united states of america\u{1E}US\u{1F}uruguay\u{1E}UY\u{1F}usa\u{1E}US\u{1F}uzbekistan\u{1E}UZ\u{1F}vanuatu\u{1E}VU\u{1F}" +
        "vatican\u{1E}VA\u{1F}venezuela\u{1E}VE\u{1F}venezuela, bolivarian republic of\u{1E}VE\u{1F}viet nam\u{1E}VN\u{1F}vietnam\u{1E}VN\u{1F}virgin islands of the united states\u{1E}VI\u{1F}" +
        "virgin islands, british\u{1E}VG\u{1F}virgin islands, u.s.\u{1E}VI\u{1F}wales\u{1E}GB\u{1F}wallis and futuna\u{1E}WF\u{1F}western sahara\u{1E}EH\u{1F}yemen\u{1E}YE\u{1F}" +
        "zambia\u{1E}ZM\u{1F}zimbabwe\u{1E}ZW\u{1F}åland islands\u{1E}AX\u{1F}"

    static let byName: [String: String] = {
        var map: [String: String] = [:]
        for pair in namesTable.split(separator: "\u{1F}") {
            let parts = pair.split(separator: "\u{1E}")
            if parts.count == 2 { map[String(parts[0])] = String(parts[1]) }
        }
        return map
    }()

    /// The two-letter code of a country's name as files write it ("Portugal", "United States",
    /// "USA", "PRT"), ignoring case and surrounding spaces; nil when unknown.
    public static func alpha2(forName name: String) -> String? {
        let key = String(name.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()).lowercased()
        return byName[key] ?? alpha2(key)
    }

    /// The two-letter code for a code a file gives (either form, any case, trimmed); nil for
    /// anything else (a country's name in the code field, `XX`).
    public static func alpha2(_ code: String) -> String? {
        let c = String(code.filter { !$0.isWhitespace }).uppercased()
        switch c.count {
        case 2: return alpha2s.contains(c) ? c : nil
        case 3: return byAlpha3[c]
        default: return nil
        }
    }
}
